"""functrace.numpy.fft and lax.fft: values against NumPy for every function, norm,
length and axis; derivatives against JAX's recorded values, finite differences and
check_grads; vmap against a loop; jit against eager; errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.test_util import check_grads

FFT = fnp.fft
NORMS = [None, "backward", "ortho", "forward"]

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# JAX 0.10.2 (jax_enable_x64) values of lax.fft's vjp and jvp:
# name: (fft_type, x, fft_lengths, tangent, jvp_out, cotangent, vjp_out)
JAX_FFT_CASES = {
    "FFT": (
        "fft",
        [
            [
                (0.5841275134629758 + 1.0131947708267264j),
                (1.4874972156787027 - 0.7947542113627402j),
                (0.2116800120898008 - 1.4383864119947076j),
            ],
            [
                (-1.3742489051241829 + 0.0252208507265259j),
                (-0.9468999568084813 + 1.4518795080472298j),
                (0.8676596465823001 + 0.751531284686827j),
            ],
        ],
        (3,),
        [
            [
                (0.608889259424083 + 0.7092363395787085j),
                (1.2412480509750918 - 0.556327947953918j),
                (0.34817600846286056 - 1.0068704883962953j),
            ],
            [
                (-0.761974233586928 + 0.01765459550856813j),
                (-0.4628299697659369 + 1.0163156556330608j),
                (0.80736175260761 + 0.5260718992807788j),
            ],
        ],
        [
            [
                (2.1983133188620356 - 0.8539620967715049j),
                (0.2043585152137833 + 0.7174124815285668j),
                (-0.5760040558035697 + 2.264258633979064j),
            ],
            [
                (-0.4174424507452548 + 1.5600421504224076j),
                (-0.5096765779599796 + 0.34647911730385095j),
                (-1.3588036720555494 - 1.853557481200554j),
            ],
        ],
        [
            [
                (1 + 0.8414709848078965j),
                (0.6216099682706644 + 0.9974949866040544j),
                (-0.2272020946930871 + 0.9092974268256817j),
            ],
            [
                (-0.9040721420170612 + 0.5984721441039565j),
                (-0.896758416334147 + 0.1411200080598672j),
                (-0.2107957994307797 - 0.35078322768961984j),
            ],
        ],
        [
            [
                (1.3944078735775773 + 2.7482633982376328j),
                (0.8791773905310787 - 0.8470180314722566j),
                (0.726414735891344 + 0.6231675876583136j),
            ],
            [
                (-2.0116263577819877 + 0.3888089244742039j),
                (0.07570566422822356 + 1.2973648062036016j),
                (-0.7762957324974192 + 0.10924270163406402j),
            ],
        ],
    ),
    "FFT2": (
        "fft",
        [
            [
                (0.5841275134629758 + 1.0131947708267264j),
                (1.4874972156787027 - 0.7947542113627402j),
                (0.2116800120898008 - 1.4383864119947076j),
            ],
            [
                (-1.3742489051241829 + 0.0252208507265259j),
                (-0.9468999568084813 + 1.4518795080472298j),
                (0.8676596465823001 + 0.751531284686827j),
            ],
        ],
        (2, 3),
        [
            [
                (0.608889259424083 + 0.7092363395787085j),
                (1.2412480509750918 - 0.556327947953918j),
                (0.34817600846286056 - 1.0068704883962953j),
            ],
            [
                (-0.761974233586928 + 0.01765459550856813j),
                (-0.4628299697659369 + 1.0163156556330608j),
                (0.80736175260761 + 0.5260718992807788j),
            ],
        ],
        [
            [
                (1.7808708681167809 + 0.7060800536509027j),
                (-0.3053180627461963 + 1.0638915988324178j),
                (-1.9348077278591191 + 0.4107011527785098j),
            ],
            [
                (2.6157557696072904 - 2.4140042471939127j),
                (0.7140350931737629 + 0.3709333642247159j),
                (0.7827996162519797 + 4.117816115179618j),
            ],
        ],
        [
            [
                (1 + 0.8414709848078965j),
                (0.6216099682706644 + 0.9974949866040544j),
                (-0.2272020946930871 + 0.9092974268256817j),
            ],
            [
                (-0.9040721420170612 + 0.5984721441039565j),
                (-0.896758416334147 + 0.1411200080598672j),
                (-0.2107957994307797 - 0.35078322768961984j),
            ],
        ],
        [
            [
                (-0.6172184842044104 + 3.1370723227118367j),
                (0.9548830547593022 + 0.450346774731345j),
                (-0.049880996606075256 + 0.7324102892923776j),
            ],
            [
                (3.4060342313595653 + 2.359454473763429j),
                (0.8034717263028551 - 2.1443828376758582j),
                (1.5027104683887633 + 0.5139248860242496j),
            ],
        ],
    ),
    "IFFT": (
        "ifft",
        [
            [
                (0.5841275134629758 + 1.0131947708267264j),
                (1.4874972156787027 - 0.7947542113627402j),
                (0.2116800120898008 - 1.4383864119947076j),
            ],
            [
                (-1.3742489051241829 + 0.0252208507265259j),
                (-0.9468999568084813 + 1.4518795080472298j),
                (0.8676596465823001 + 0.751531284686827j),
            ],
        ],
        (3,),
        [
            [
                (0.608889259424083 + 0.7092363395787085j),
                (1.2412480509750918 - 0.556327947953918j),
                (0.34817600846286056 - 1.0068704883962953j),
            ],
            [
                (-0.761974233586928 + 0.01765459550856813j),
                (-0.4628299697659369 + 1.0163156556330608j),
                (0.80736175260761 + 0.5260718992807788j),
            ],
        ],
        [
            [
                (0.7327711062873452 - 0.2846540322571683j),
                (-0.19200135193452322 + 0.7547528779930213j),
                (0.06811950507126109 + 0.2391374938428556j),
            ],
            [
                (-0.1391474835817516 + 0.5200140501408025j),
                (-0.4529345573518498 - 0.6178524937335179j),
                (-0.1698921926533265 + 0.11549303910128364j),
            ],
        ],
        [
            [
                (1 + 0.8414709848078965j),
                (0.6216099682706644 + 0.9974949866040544j),
                (-0.2272020946930871 + 0.9092974268256817j),
            ],
            [
                (-0.9040721420170612 + 0.5984721441039565j),
                (-0.896758416334147 + 0.1411200080598672j),
                (-0.2107957994307797 - 0.35078322768961984j),
            ],
        ],
        [
            [
                (0.4648026245258591 + 0.9160877994125443j),
                (0.24213824529711464 + 0.20772252921943785j),
                (0.29305913017702623 - 0.28233934382408554j),
            ],
            [
                (-0.6705421192606625 + 0.12960297482473462j),
                (-0.2587652441658064 + 0.03641423387802134j),
                (0.02523522140940785 + 0.4324549354012005j),
            ],
        ],
    ),
    "IFFT2": (
        "ifft",
        [
            [
                (0.5841275134629758 + 1.0131947708267264j),
                (1.4874972156787027 - 0.7947542113627402j),
                (0.2116800120898008 - 1.4383864119947076j),
            ],
            [
                (-1.3742489051241829 + 0.0252208507265259j),
                (-0.9468999568084813 + 1.4518795080472298j),
                (0.8676596465823001 + 0.751531284686827j),
            ],
        ],
        (2, 3),
        [
            [
                (0.608889259424083 + 0.7092363395787085j),
                (1.2412480509750918 - 0.556327947953918j),
                (0.34817600846286056 - 1.0068704883962953j),
            ],
            [
                (-0.761974233586928 + 0.01765459550856813j),
                (-0.4628299697659369 + 1.0163156556330608j),
                (0.80736175260761 + 0.5260718992807788j),
            ],
        ],
        [
            [
                (0.2968118113527968 + 0.1176800089418171j),
                (-0.3224679546431865 + 0.06845019212975167j),
                (-0.050886343791032705 + 0.17731526647206963j),
            ],
            [
                (0.43595929493454844 - 0.4023340411989854j),
                (0.13046660270866328 + 0.6863026858632696j),
                (0.11900584886229379 + 0.06182222737078598j),
            ],
        ],
        [
            [
                (1 + 0.8414709848078965j),
                (0.6216099682706644 + 0.9974949866040544j),
                (-0.2272020946930871 + 0.9092974268256817j),
            ],
            [
                (-0.9040721420170612 + 0.5984721441039565j),
                (-0.896758416334147 + 0.1411200080598672j),
                (-0.2107957994307797 - 0.35078322768961984j),
            ],
        ],
        [
            [
                (-0.10286974736740173 + 0.5228453871186395j),
                (-0.008313499434345867 + 0.1220683815487296j),
                (0.15914717579321705 + 0.07505779578855748j),
            ],
            [
                (0.5676723718932608 + 0.39324241229390483j),
                (0.2504517447314605 + 0.08565414767070825j),
                (0.13391195438380918 - 0.357397139612643j),
            ],
        ],
    ),
    "RFFT4": (
        "rfft",
        [0.5841275134629758, 1.4874972156787027, 0.2116800120898008, -1.3742489051241829],
        (4,),
        [-1.1591467313339807, 0.6072748809248975, 1.4840373699350726, 0.18668163526059256],
        [
            (1.118847154786582 + 0j),
            (-2.6431841012690533 - 0.4205932456643049j),
            (-0.4690658775843981 + 0j),
        ],
        [
            (1 + 0.8414709848078965j),
            (0.6216099682706644 + 0.9974949866040544j),
            (-0.2272020946930871 + 0.9092974268256817j),
        ],
        [1.3944078735775773, 2.2246970812971414, 0.15118793703624855, 0.2297071080890326],
    ),
    "RFFT5": (
        "rfft",
        [
            0.5841275134629758,
            1.4874972156787027,
            0.2116800120898008,
            -1.3742489051241829,
            -0.9468999568084813,
        ],
        (5,),
        [
            -1.1591467313339807,
            0.6072748809248975,
            1.4840373699350726,
            0.18668163526059256,
            -1.384163132419211,
        ],
        [
            (-0.2653159776326288 + 0j),
            (-2.7508584718044613 - 2.6565366672075155j),
            (-0.014350367714176193 + 0.06332073031676222j),
        ],
        [
            (1 + 0.8414709848078965j),
            (0.6216099682706644 + 0.9974949866040544j),
            (-0.2272020946930871 + 0.9092974268256817j),
        ],
        [
            1.3944078735775776,
            2.8590441242499636,
            0.14841726270697175,
            0.7053780640498496,
            -0.10724732458436215,
        ],
    ),
    "RFFT2": (
        "rfft",
        [
            [0.5841275134629758, 1.4874972156787027, 0.2116800120898008, -1.3742489051241829],
            [-0.9468999568084813, 0.8676596465823001, 1.4110958350196587, -0.11272668069271395],
        ],
        (2, 4),
        [
            [-1.1591467313339807, 0.6072748809248975, 1.4840373699350726, 0.18668163526059256],
            [-1.384163132419211, -0.9272056683555499, 0.8881102720608367, 1.4023425832870244],
        ],
        [
            [
                (1.0979312093596822 + 0j),
                (-4.915457505749101 + 1.9089550059782694j),
                (-1.440255652874247 + 0j),
            ],
            [
                (1.1397631002134816 + 0j),
                (-0.37091069678900546 - 2.7501414973068794j),
                (0.5021238977054507 + 0j),
            ],
        ],
        [
            [
                (1 + 0.8414709848078965j),
                (0.6216099682706644 + 0.9974949866040544j),
                (-0.2272020946930871 + 0.9092974268256817j),
            ],
            [
                (-0.9040721420170612 + 0.5984721441039565j),
                (-0.896758416334147 + 0.1411200080598672j),
                (-0.2107957994307797 - 0.35078322768961984j),
            ],
        ],
        [
            [-0.6172184842044106, 1.6725407467707272, -0.06692158807744542, -0.6046892425571161],
            [3.4060342313595653, 2.776853415823556, 0.3692974621499425, 1.0641034587351814],
        ],
    ),
    "IRFFT4": (
        "irfft",
        [
            (0.5841275134629758 + 1.0131947708267264j),
            (1.4874972156787027 - 0.7947542113627402j),
            (0.2116800120898008 - 1.4383864119947076j),
        ],
        (4,),
        [
            (0.608889259424083 + 0.7092363395787085j),
            (1.2412480509750918 - 0.556327947953918j),
            (0.34817600846286056 - 1.0068704883962953j),
        ],
        [0.8598903424592819, 0.34334228671726463, -0.38135770851581, -0.2129856612366534],
        [1.0, 0.6216099682706644, -0.2272020946930871, -0.9040721420170612],
        [
            (0.12258393289012903 - 0j),
            (0.6136010473465435 + 0.7628410551438628j),
            (0.26381501976332744 - 0j),
        ],
    ),
    "IRFFT5": (
        "irfft",
        [
            (0.5841275134629758 + 1.0131947708267264j),
            (1.4874972156787027 - 0.7947542113627402j),
            (0.2116800120898008 - 1.4383864119947076j),
        ],
        (5,),
        [
            (0.608889259424083 + 0.7092363395787085j),
            (1.2412480509750918 - 0.556327947953918j),
            (0.34817600846286056 - 1.0068704883962953j),
        ],
        [
            0.7575474756599976,
            0.6109016031858333,
            -0.48909728396882496,
            0.015374216678481423,
            -0.2858367521314043,
        ],
        [1.0, 0.6216099682706644, -0.2272020946930871, -0.9040721420170612, -0.896758416334147],
        [
            (-0.08128453695472618 - 0j),
            (0.7320778145478194 + 0.7367633511401969j),
            (0.34920672240690687 + 0.09949314993015174j),
        ],
    ),
    "IRFFT2": (
        "irfft",
        [
            [
                (0.5841275134629758 + 1.0131947708267264j),
                (1.4874972156787027 - 0.7947542113627402j),
                (0.2116800120898008 - 1.4383864119947076j),
                (-1.3742489051241829 + 0.0252208507265259j),
            ],
            [
                (-0.9468999568084813 + 1.4518795080472298j),
                (0.8676596465823001 + 0.751531284686827j),
                (1.4110958350196587 - 1.0498120313903154j),
                (-0.11272668069271395 - 1.3131782620326429j),
            ],
        ],
        (2, 6),
        [
            [
                (0.608889259424083 + 0.7092363395787085j),
                (1.2412480509750918 - 0.556327947953918j),
                (0.34817600846286056 - 1.0068704883962953j),
                (-0.761974233586928 + 0.01765459550856813j),
            ],
            [
                (-0.4628299697659369 + 1.0163156556330608j),
                (0.80736175260761 + 0.5260718992807788j),
                (1.1877670845137611 - 0.7348684219732208j),
                (0.12109132351510025 - 0.91922478342285j),
            ],
        ],
        [
            [
                0.5561901810587471,
                0.36406618417948866,
                -0.5869793158095422,
                -0.019865935123515505,
                -0.0929167703526252,
                -0.14746469912347973,
            ],
            [
                -0.05189632360657047,
                0.46451292408618383,
                0.16650071503985053,
                -0.04934749687872637,
                -0.06744097341128213,
                0.07353076936555453,
            ],
        ],
        [
            [
                1.0,
                0.6216099682706644,
                -0.2272020946930871,
                -0.9040721420170612,
                -0.896758416334147,
                -0.2107957994307797,
            ],
            [
                0.6346928759426347,
                0.9998586363834151,
                0.6083513145322546,
                -0.2435441537357911,
                -0.9111302618846769,
                -0.8891911526253609,
            ],
        ],
        [
            [
                (-0.0348484354659946 - 0j),
                (0.6260699545307141 + 0.7087686794910805j),
                (0.15661758051344016 + 0.07684786963604362j),
                (0.06950733839315762 - 0j),
            ],
            [
                (-0.06802131190140716 - 0j),
                (0.26441653945282606 - 0.27518957119382687j),
                (-0.005783904154569031 - 0.02983728387587155j),
                (-0.007957761368167244 - 0j),
            ],
        ],
    ),
    "IRFFT1": (
        "irfft",
        [(0.5841275134629758 + 1.0131947708267264j)],
        (1,),
        [(0.608889259424083 + 0.7092363395787085j)],
        [0.608889259424083],
        [1.0],
        [(1 - 0j)],
    ),
}
# JAX 0.10.2 (jax_enable_x64) values of jax.grad of the real losses _loss_* below
# (written with jax.numpy.fft in place of functrace.numpy.fft; argnums (0, 1) for two)
JAX_GRADS = {
    "rfft4": (
        [0.5841275134629758, 1.4874972156787027, 0.2116800120898008, -1.3742489051241829],
        [-2.272730864767294, 0.25375232932219793, 2.909376885209515, -0.16315368087858198],
    ),
    "rfft5": (
        [
            0.5841275134629758,
            1.4874972156787027,
            0.2116800120898008,
            -1.3742489051241829,
            -0.9468999568084813,
        ],
        [
            0.7556768734047923,
            -0.020355141401897148,
            -0.9755363716280081,
            -0.20039095844786273,
            0.4027614773717911,
        ],
    ),
    "irfft4": (
        [0.5841275134629758, 1.4874972156787027, 0.2116800120898008],
        [-0.38331165304024684, -1.4998848863461514, -0.4191232472983888],
        [0.5304100180619878, -0.518244255036052, -0.01216576302593586],
        [0.0, 1.2892540686234317, 0.0],
    ),
    "irfft5": (
        [0.5841275134629758, 1.4874972156787027, 0.2116800120898008],
        [-0.38331165304024684, -1.4998848863461514, -0.4191232472983888],
        [0.543707610274507, -0.4734267631601573, -0.07028084711434972],
        [0.0, 1.2317494927901889, 0.11390748026557809],
    ),
    "fft5": (
        [
            0.5841275134629758,
            1.4874972156787027,
            0.2116800120898008,
            -1.3742489051241829,
            -0.9468999568084813,
        ],
        [
            1.4781745949826903,
            0.6410698203507447,
            -1.1352037429618922,
            -1.2484011633358512,
            0.46731204527006803,
        ],
        [
            5.297030443367145,
            8.587385862247025,
            -5.23850898104019,
            -11.964296175439305,
            4.333146622394121,
        ],
        [
            4.176354723830656,
            -0.8821631143132018,
            -11.159940375320597,
            -3.1967780190948414,
            10.87330618139206,
        ],
    ),
    "ifft2": (
        [
            [0.5841275134629758, 1.4874972156787027, 0.2116800120898008, -1.3742489051241829],
            [-0.9468999568084813, 0.8676596465823001, 1.4110958350196587, -0.11272668069271395],
            [-1.4714043450997374, -0.6744711968018998, 1.1105638349286728, 1.2686202467144],
        ],
        [
            [0.09735458557716259, 0.009437359212876653, 0.035280002014966796, 0.009437359212876653],
            [-0.2015253584923515, 0.17802332444139163, 0.21013830582902757, -0.06559982312455113],
            [-0.2015253584923515, -0.06559982312455113, 0.21013830582902757, 0.17802332444139163],
        ],
    ),
}


def _inp(shape, k=0):
    """The inputs the JAX values above were recorded at."""
    n = int(np.prod(shape))
    return np.sin(np.arange(n) * 1.3 + 0.4 + k).reshape(shape) * 1.5


def _rng(seed=0):
    return np.random.default_rng(seed)


def _close(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# Values against NumPy (traced path: under jit and make_jaxpr)
# ---------------------------------------------------------------------------

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn"}


def _input(name, shape=(3, 4, 5), dtype=np.float64):
    rng = _rng(1)
    x = rng.normal(size=shape)
    if name in REAL_IN:
        return x.astype(dtype)
    z = x + 1j * rng.normal(size=shape)
    return z.astype(np.complex64 if dtype == np.float32 else np.complex128)


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 1, 3, 4, 5, 8])
@pytest.mark.parametrize("axis", [-1, -2, 0, 2])
def test_one_dimensional_matches_numpy(name, norm, n, axis):
    x = _input(name)
    want = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
    f = ft.jit(lambda a: getattr(FFT, name)(a, n=n, axis=axis, norm=norm))
    _close(f(x), want)
    # eager on Arrays: NumPy's values, as functrace.Array
    got = getattr(FFT, name)(fnp.asarray(x), n=n, axis=axis, norm=norm)
    assert type(got) is ft.Array
    _close(got, want)


N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
S_AXES = [
    (None, None),
    ((2, 6), None),
    ((5, 3), (0, -1)),
    (None, (-1, 0)),
    ((4, 2, 3), (2, 0, 1)),
    ((7,), (-2,)),
    ((1, 1), (-2, -1)),
]


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s,axes", S_AXES)
def test_multi_dimensional_matches_numpy(name, norm, s, axes):
    if name.endswith("2"):
        axes = (-2, -1) if axes is None else axes
        if len(axes) != 2 or (s is not None and len(s) != 2):
            pytest.skip("two axes only")
    elif axes is None and s is not None:
        axes = tuple(range(3 - len(s), 3))  # NumPy 2's recommended spelling of the default
    x = _input(name)
    kw = {"s": s, "norm": norm} | ({} if axes is None else {"axes": axes})
    want = getattr(np.fft, name)(x, **kw)
    _close(ft.jit(lambda a: getattr(FFT, name)(a, **kw))(x), want)


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_float32_results_keep_single_precision(name):
    x = _input(name, (2, 4), np.float32)
    want = getattr(np.fft, name)(x)
    got = ft.jit(getattr(FFT, name))(x)
    _close(got, want, tol=1e-4)


def test_integer_inputs_are_converted_as_numpy():
    x = np.arange(6).reshape(2, 3)
    for name in ("fft", "rfft", "fftn", "ihfft"):
        _close(ft.jit(getattr(FFT, name))(x), getattr(np.fft, name)(x))
    assert lax.fft(np.arange(4), "fft", (4,)).dtype == np.complex128  # JAX converts too
    assert lax.fft(np.arange(4), "rfft", (4,)).dtype == np.complex128


def test_freqs_and_shifts():
    for n in (1, 4, 5):
        for d in (1.0, 0.25):
            _close(FFT.fftfreq(n, d), np.fft.fftfreq(n, d))
            _close(FFT.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    assert type(FFT.fftfreq(4)) is ft.Array
    assert FFT.fftfreq(4, dtype=np.float32).dtype == np.float32
    assert FFT.rfftfreq(5, 2.0, dtype=np.float32).dtype == np.float32
    # a traced spacing: jit, and a derivative in d
    _close(ft.jit(lambda d: FFT.fftfreq(6, d))(0.5), np.fft.fftfreq(6, 0.5))
    g = ft.grad(lambda d: fnp.sum(FFT.rfftfreq(6, d)))(0.5)
    np.testing.assert_allclose(g, -np.sum(np.fft.rfftfreq(6)) / 0.25)
    x = np.arange(24.0).reshape(2, 3, 4)
    for axes in (None, 0, -1, (0, 2), (-2,)):
        for name in ("fftshift", "ifftshift"):
            want = getattr(np.fft, name)(x, axes=axes)
            _close(ft.jit(lambda a, f=getattr(FFT, name), ax=axes: f(a, axes=ax))(x), want)


def test_import_forms():
    import functrace.numpy.fft as m
    from functrace.numpy import fft

    assert fft is m is fnp.fft
    assert lax.FftType.IRFFT == 3 and lax.FftType["RFFT"] is lax.FftType.RFFT
    text = str(ft.make_jaxpr(lambda x: lax.fft(x, "rfft", (4,)))(np.ones(4)))
    assert "fft[fft_type=RFFT, fft_lengths=(4,)]" in text


def test_zero_lengths_give_empty_results():
    # JAX's values; NumPy raises on plain inputs
    out = ft.jit(FFT.fft)(np.zeros((2, 0)))
    assert out.shape == (2, 0) and out.dtype == np.complex128
    assert lax.fft(np.zeros((3, 2), complex), "fft", (3, 2)).shape == (3, 2)
    assert ft.jit(lambda a: FFT.fft(a, n=0))(np.ones(3)).shape == (0,)


# ---------------------------------------------------------------------------
# Derivatives: JAX's values, finite differences
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(JAX_FFT_CASES))
def test_jvp_and_vjp_match_jax(case):
    kind, x, lengths, tangent, jvp_out, ct, vjp_out = JAX_FFT_CASES[case]
    x, tangent, ct = np.array(x), np.array(tangent), np.array(ct)

    def f(a):
        return lax.fft(a, kind, lengths)

    y, t = ft.jvp(f, (x,), (tangent,))
    _close(t, np.array(jvp_out).astype(np.asarray(y).dtype))
    y, vjp_fn = ft.vjp(f, x)
    (g,) = vjp_fn(ct.astype(np.asarray(y).dtype))
    _close(g, np.array(vjp_out).astype(x.dtype))
    # the same under jit
    (gj,) = ft.jit(lambda a, c: ft.vjp(f, a)[1](c))(x, ct.astype(np.asarray(y).dtype))
    _close(gj, np.array(vjp_out).astype(x.dtype))


def _loss_rfft(x):
    y = FFT.rfft(x)
    return fnp.sum(fnp.sin(y.real) * y.imag + fnp.abs(y) ** 2 * 0.1)


def _loss_irfft(a, b, n):
    y = FFT.irfft(a + 1j * b, n=n)
    return fnp.sum(fnp.cos(y) * fnp.arange(n))


def _loss_fft(a, b):
    y = FFT.fft(a + 1j * b)
    return fnp.sum(fnp.abs(y) * fnp.arange(a.size) + y.real * y.imag)


def _loss_ifft2(a):
    y = FFT.ifft2(a)
    return fnp.sum(y.real**2 - fnp.sin(y.imag))


@pytest.mark.parametrize("n", [4, 5])
def test_grads_of_real_losses_match_jax(n):
    x, g = JAX_GRADS[f"rfft{n}"]
    _close(ft.grad(_loss_rfft)(np.array(x)), np.array(g))
    a, b, ga, gb = JAX_GRADS[f"irfft{n}"]
    got = ft.grad(_loss_irfft, argnums=(0, 1))(np.array(a), np.array(b), n)
    _close(got[0], np.array(ga))
    _close(got[1], np.array(gb))


def test_grads_of_complex_transforms_match_jax():
    a, b, ga, gb = JAX_GRADS["fft5"]
    got = ft.grad(_loss_fft, argnums=(0, 1))(np.array(a), np.array(b))
    _close(got[0], np.array(ga))
    _close(got[1], np.array(gb))
    a, g = JAX_GRADS["ifft2"]
    _close(ft.grad(_loss_ifft2)(np.array(a)), np.array(g))
    _close(ft.jit(ft.grad(_loss_ifft2))(np.array(a)), np.array(g))


LAX_CASES = [
    ("fft", (2, 3), (3,)),
    ("fft", (2, 3), (2, 3)),
    ("ifft", (3, 4), (4,)),
    ("ifft", (2, 3), (2, 3)),
    ("rfft", (2, 4), (4,)),
    ("rfft", (2, 5), (5,)),
    ("rfft", (3, 4), (3, 4)),
    ("irfft", (2, 3), (4,)),
    ("irfft", (2, 3), (5,)),
    ("irfft", (2, 3), (2, 4)),
    ("irfft", (1,), (1,)),
    ("irfft", (2,), (2,)),
]


@pytest.mark.parametrize("kind,shape,lengths", LAX_CASES)
def test_lax_fft_check_grads(kind, shape, lengths):
    rng = _rng(3)
    x, y = rng.normal(size=shape), rng.normal(size=shape)
    w = rng.normal(size=2)

    def f(x, y):
        inp = x if kind == "rfft" else lax.complex(x, y)
        out = lax.fft(inp, kind, lengths)
        # a real, nonlinear function of both parts (order 2 sees the second derivative)
        if out.dtype.kind == "c":
            return fnp.sin(out.real * w[0]) + out.imag * out.real * w[1]
        return fnp.sin(out * w[0]) * out

    check_grads(f, (x, y), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: FFT.rfft(x, n=6, norm="ortho"),
        lambda x: FFT.irfft(x, n=7, axis=0),
        lambda x: FFT.hfft(x, norm="forward"),
        lambda x: FFT.ihfft(x, n=3),
        lambda x: FFT.fft2(x, s=(4, 2)),
        lambda x: FFT.irfftn(x, axes=(1, 0)),
        lambda x: FFT.rfftn(x, s=(3, 3), axes=(0, 1), norm="forward"),
    ],
)
def test_numpy_fft_check_grads(fn):
    x = _rng(4).normal(size=(3, 4))

    def f(x):
        y = fn(x)
        return fnp.cos(y.real) + y.imag**2 if fnp.iscomplexobj(y) else fnp.cos(y)

    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_transposes_against_finite_differences():
    # <ct, J v> == <J^T ct, v> for the real-linear maps, complex parts included
    rng = _rng(5)
    for kind, shape, lengths in LAX_CASES:
        cin = kind != "rfft"
        x = rng.normal(size=shape) + (1j * rng.normal(size=shape) if cin else 0)
        v = rng.normal(size=shape) + (1j * rng.normal(size=shape) if cin else 0)

        def f(a, kind=kind, lengths=lengths):
            return lax.fft(a, kind, lengths)

        y, vjp_fn = ft.vjp(f, x)
        y = np.asarray(y)
        ct = rng.normal(size=y.shape) + (
            1j * rng.normal(size=y.shape) if y.dtype.kind == "c" else 0
        )
        (g,) = vjp_fn(ct.astype(y.dtype))
        jv = (np.asarray(f(x + 1e-6 * v)) - np.asarray(f(x - 1e-6 * v))) / 2e-6
        # JAX's convention: the pairing is the real part of sum(ct * t) (no conjugate)
        lhs = np.sum(np.real(ct * jv))
        rhs = np.sum(np.real(np.asarray(g) * v))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-6, err_msg=f"{kind} {shape} {lengths}")


# ---------------------------------------------------------------------------
# vmap, jit
# ---------------------------------------------------------------------------

VMAP_FNS = {
    "lax_fft": lambda a: lax.fft(a, "fft", (4,)),
    "lax_irfft": lambda a: lax.fft(a, "irfft", (6,)),
    "fft_axis0": lambda a: FFT.fft(a, n=3, axis=0),
    "rfft2": lambda a: FFT.rfft2(a.real),
    "irfftn": lambda a: FFT.irfftn(a, s=(2, 5)),
    "ifft_ortho": lambda a: FFT.ifft(a, norm="ortho"),
    "fftshift": lambda a: FFT.fftshift(a, axes=0),
}


@pytest.mark.parametrize("name", sorted(VMAP_FNS))
@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_vmap_matches_loop(name, in_axis):
    fn = VMAP_FNS[name]
    rng = _rng(6)
    shape = (3, 4)  # lax_irfft: 4 == 6 // 2 + 1
    xs = rng.normal(size=(5, *shape)) + 1j * rng.normal(size=(5, *shape))
    want = np.stack([np.asarray(fn(x)) for x in xs])
    got = ft.vmap(fn, in_axes=in_axis)(np.moveaxis(xs, 0, in_axis))
    _close(got, want)
    _close(ft.jit(ft.vmap(fn, in_axes=in_axis))(np.moveaxis(xs, 0, in_axis)), want)


def test_vmap_of_grad_matches_loop():
    xs = _rng(7).normal(size=(4, 6))
    want = np.stack([np.asarray(ft.grad(_loss_rfft)(x)) for x in xs])
    _close(ft.vmap(ft.grad(_loss_rfft))(xs), want)


@pytest.mark.parametrize("name", sorted(VMAP_FNS))
def test_jit_equals_eager(name):
    fn = VMAP_FNS[name]
    x = _rng(8).normal(size=(3, 4)) + 1j * _rng(9).normal(size=(3, 4))
    _close(ft.jit(fn)(x), fn(x), tol=1e-12)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_lax_fft_errors():
    z = np.ones((2, 4), complex)
    with pytest.raises(ValueError, match=r"^fft: .*FFT.*fft_lengths \(3,\).*\(2, 4\)"):
        lax.fft(z, "fft", (3,))
    with pytest.raises(ValueError, match=r"^fft: .*RFFT.*fft_lengths \(5,\).*\(4,\)"):
        lax.fft(np.ones(4), "rfft", (5,))
    with pytest.raises(ValueError, match=r"^fft: .*IRFFT.*\(3,\).*got shape \(2, 4\)"):
        lax.fft(z, "irfft", (4,))
    with pytest.raises(ValueError, match=r"^fft: .*at least 3 dimensions"):
        lax.fft(z, "fft", (1, 2, 4))
    with pytest.raises(ValueError, match=r"^fft: expected a real operand for RFFT, got complex128"):
        lax.fft(z, "rfft", (4,))
    with pytest.raises(ValueError, match=r"^fft: expected fft_type .* got 'dft'"):
        lax.fft(z, "dft", (4,))
    with pytest.raises(ValueError, match=r"^fft: expected fft_lengths"):
        lax.fft(z, "fft", ())
    # the primitive itself takes float/complex operands only
    with pytest.raises(TypeError, match=r"^fft: expected a complex operand for FFT, got int64"):
        lax.fourier.fft_p.bind(np.arange(4), fft_type=lax.FftType.FFT, fft_lengths=(4,))
    with pytest.raises(TypeError, match=r"^fft: expected a real floating-point operand"):
        ft.jit(lambda a: lax.fourier.fft_p.bind(a, fft_type=lax.FftType.RFFT, fft_lengths=(4,)))(
            np.arange(4)
        )
    with pytest.raises(ValueError, match=r"^fft: .*fft_lengths \(3,\)"):
        ft.jit(lambda a: lax.fft(a, "fft", (3,)))(z)


def test_numpy_fft_errors():
    x = np.ones((2, 4))
    traced = ft.jit
    with pytest.raises(ValueError, match=r"^fft: expected norm .* got 'unitary'"):
        traced(lambda a: FFT.fft(a, norm="unitary"))(x)
    with pytest.raises(ValueError, match=r"^fftn: expected distinct axes, got \(1, 1\)"):
        traced(lambda a: FFT.fftn(a, axes=(1, -1)))(x)
    with pytest.raises(ValueError, match=r"^ifftn: expected one length in s per axis"):
        traced(lambda a: FFT.ifftn(a, s=(2, 3), axes=(0,)))(x)
    with pytest.raises(np.exceptions.AxisError, match=r"^rfft: expected axis in \[-2, 2\)"):
        traced(lambda a: FFT.rfft(a, axis=2))(x)
    with pytest.raises(TypeError, match=r"^rfft: expected a real input, got complex128"):
        traced(FFT.rfft)(x + 1j)
    with pytest.raises(ValueError, match=r"^fft: expected non-negative lengths"):
        traced(lambda a: FFT.fft(a, n=-1))(x)
    with pytest.raises(ValueError, match=r"^fftfreq: expected n > 0, got 0"):
        FFT.fftfreq(0)
    with pytest.raises(TypeError, match=r"^rfftfreq: expected n, a Python int"):
        FFT.rfftfreq(2.5)
