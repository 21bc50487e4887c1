"""config.debug_nans / debug_infs: the first primitive producing a NaN (inf) is named,
with its pass, the user's line and its inputs' types; eagerly, under the transforms
and under jit (the compiled call checks its outputs, then re-runs op by op)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp


@pytest.fixture(autouse=True)
def _quiet() -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own "invalid value"
        yield


def _line(ahead: int) -> str:
    """``file:line`` of the caller's line ``ahead`` lines below (the tested call)."""
    frame = inspect.currentframe().f_back  # type: ignore[union-attr]
    return f"test_debug_nans.py:{frame.f_lineno + ahead}"  # type: ignore[union-attr]


def _where_log(x: object) -> object:
    return fnp.where(x > 0, fnp.log(x), 0.0)  # the acceptance case of the issue


WHERE_LOG_LINE = f"test_debug_nans.py:{_where_log.__code__.co_firstlineno + 1}"


def test_forward_nan_eager_names_log_and_line() -> None:
    with ft.debug_nans(True):
        line = _line(2)
        with pytest.raises(FloatingPointError) as e:
            fnp.log(-1.0)
    msg = str(e.value)
    assert "'log' produced NaN in the forward pass" in msg
    assert line in msg
    assert "Its inputs: f64[]" in msg


def test_switch_off_returns_nan() -> None:
    assert not ft.config.debug_nans
    assert np.isnan(fnp.log(-1.0))
    assert np.isnan(ft.grad(_where_log)(0.0))
    assert np.isnan(ft.jit(ft.grad(_where_log))(0.0))


def test_inf_with_debug_infs_only() -> None:
    with ft.debug_nans(True):
        assert fnp.log(0.0) == -np.inf  # an inf is not a NaN
    with ft.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"'log' produced inf in the forward"):
            fnp.log(np.zeros(2, np.float32))


def test_input_nan_is_reported_as_input() -> None:
    x = np.array([1.0, np.nan])
    with ft.debug_nans(True), pytest.raises(FloatingPointError) as e:
        fnp.sin(x)
    assert "the input 0 (f64[2]) of 'sin'" in str(e.value)
    assert "already contains NaN" in str(e.value)


def test_integer_outputs_not_checked() -> None:
    with ft.debug_nans(True), ft.debug_infs(True):
        assert fnp.floor_divide(7, 2) == 3
        assert int(fnp.sum(np.arange(3))) == 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_nan_under_grad_attributed_to_log(dtype: type) -> None:
    with ft.debug_nans(True), pytest.raises(FloatingPointError) as e:
        ft.grad(_where_log)(dtype(0.0))
    msg = str(e.value)
    assert "'div' produced NaN in the backward pass" in msg
    assert f"derivative of 'log' bound at {WHERE_LOG_LINE}" in msg


def test_jvp_rule_output_checked() -> None:
    with ft.debug_nans(True):
        line = _line(2)
        with pytest.raises(FloatingPointError) as e:
            ft.jvp(lambda x: fnp.sqrt(x) * 0.0, (0.0,), (1.0,))
    msg = str(e.value)
    assert "'mul' produced NaN" in msg and "derivative rule (JVP) of 'mul'" in msg
    with ft.debug_infs(True), pytest.raises(FloatingPointError) as e:
        ft.jvp(fnp.sqrt, (np.float32(0.0),), (np.float32(1.0),))
    assert "derivative rule (JVP) of 'sqrt'" in str(e.value)
    assert line.split(":")[0] in str(e.value)


def test_nan_under_vmap() -> None:
    with ft.debug_nans(True):
        line = _line(2)
        with pytest.raises(FloatingPointError) as e:
            ft.vmap(lambda x: fnp.log(x) * 2.0)(np.array([1.0, -1.0]))
    assert "'log' produced NaN in the forward pass" in str(e.value)
    assert line in str(e.value)


def test_nan_under_jit_forward() -> None:
    f = ft.jit(lambda x: fnp.log(x) + 1.0)
    with ft.debug_nans(True):
        assert f(2.0) == pytest.approx(np.log(2.0) + 1.0)
        with pytest.raises(FloatingPointError) as e:
            f(np.array([1.0, -1.0]))
    msg = str(e.value)
    assert "jit of '<lambda>'" in msg and "re-run op by op" in msg
    assert "'log' produced NaN in the forward pass" in msg


def test_nan_under_jit_of_grad_traced_before_switch() -> None:
    g = ft.jit(ft.grad(_where_log))
    assert np.isnan(g(0.0))  # compiled with the switch off: traced again to locate it
    for h in (g, ft.jit(ft.grad(_where_log))):
        with ft.debug_nans(True), pytest.raises(FloatingPointError) as e:
            h(0.0)
        msg = str(e.value)
        assert "'div' produced NaN in the backward pass" in msg
        assert f"derivative of 'log' bound at {WHERE_LOG_LINE}" in msg
    with ft.debug_nans(True):
        assert g(2.0) == pytest.approx(0.5)


def test_jit_input_nan_names_argument() -> None:
    f = ft.jit(lambda p: fnp.sin(p["w"]).sum())
    with ft.debug_nans(True), pytest.raises(FloatingPointError) as e:
        f({"w": np.array([np.nan, 1.0])})
    assert "the input `p['w']` (f64[2]) contains NaN" in str(e.value)


def test_context_managers_restore_even_on_error() -> None:
    with pytest.raises(FloatingPointError):
        with ft.config.override(debug_nans=True, debug_infs=True):
            assert ft.config.debug_nans and ft.config.debug_infs
            fnp.log(-1.0)
    assert not ft.config.debug_nans and not ft.config.debug_infs
    ft.config.update("jax_debug_nans", True)
    try:
        assert ft.config.debug_nans and ft.config.read("debug_nans")
    finally:
        ft.config.debug_nans = False
    assert not ft.config.debug_nans


def test_config_errors_and_disable_jit() -> None:
    with pytest.raises(AttributeError, match="debug_infs, debug_nans, disable_jit"):
        ft.config.update("debug_nan", True)
    with pytest.raises(AttributeError, match="expected one of the switches"):
        ft.config.no_such_switch  # noqa: B018
    with pytest.raises(TypeError, match="expected True or False for debug_nans"):
        ft.config.debug_nans = "yes"
    f = ft.jit(lambda x: x + 1)
    with ft.config.override(disable_jit=True):
        assert ft.config.disable_jit
        assert f(1.0) == 2.0 and f.trace_count == 0
    assert not ft.config.disable_jit
    assert f(1.0) == 2.0 and f.trace_count == 1


def test_env_var_turns_check_on() -> None:
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    code = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "import functrace as ft, functrace.numpy as fnp\n"
        "assert ft.config.debug_nans and ft.config.explain_retraces\n"
        "try:\n    fnp.log(-1.0)\nexcept FloatingPointError as e:\n    print('raised', e)\n"
    )
    env = {
        **os.environ,
        "FUNCTRACE_DEBUG_NANS": "1",
        "FUNCTRACE_EXPLAIN_RETRACES": "1",
        "PYTHONPATH": os.path.abspath(src),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "raised" in out.stdout and "'log' produced NaN" in out.stdout


def test_eager_array_operators_checked() -> None:
    a = fnp.asarray([0.0, 1.0])
    with ft.debug_nans(True):
        line = _line(2)
        with pytest.raises(FloatingPointError) as e:
            a / a
    assert "the Array operation 'Array.__truediv__' produced NaN" in str(e.value)
    assert line in str(e.value)
    with ft.debug_infs(True):
        assert np.isnan(abs(-a) / a).any()  # a NaN is not an inf
        with pytest.raises(FloatingPointError, match="'Array.__rtruediv__' produced inf"):
            1.0 / a


def _sqrt_times_zero(x: object) -> object:
    return fnp.sqrt(x) * 0.0


def test_grad_of_jit_names_the_line_inside_the_function() -> None:
    f = ft.jit(_sqrt_times_zero)
    line = f"test_debug_nans.py:{_sqrt_times_zero.__code__.co_firstlineno + 1}"
    with ft.debug_nans(True), pytest.raises(FloatingPointError) as e:
        ft.grad(f)(0.0)
    assert f"derivative of 'sqrt' bound at {line}" in str(e.value)
