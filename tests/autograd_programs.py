"""Small programs in HIPS autograd's style, run under autograd and under functrace.

Each program exercises what one of autograd's example programs exercises (a logistic
regression, neural nets, recurrent nets, a convnet, Gaussian processes, black-box
variational inference, a VAE, a GAN, mixture models, an HMM, smoke and wing fluid
simulations, custom VJPs, implicit differentiation of a fixed point, a neural ODE,
Newton's method, Hessian-vector products). They are written here, at small sizes.

Each is a function of ``lib``, a namespace holding the names an autograd program
imports: ``lib.numpy`` (``autograd.numpy``), ``lib.scipy`` (``autograd.scipy``),
``lib.grad``, ``lib.value_and_grad``, ``lib.elementwise_grad``, ``lib.hessian``,
``lib.hessian_vector_product``, ``lib.flatten`` (``autograd.misc.flatten``),
``lib.primitive_with_vjp(fun, make_vjp)`` (``primitive`` then ``defvjp``, with
autograd's ``make_vjp(ans, x) -> (g -> x_bar)``), and ``lib.jit`` and ``lib.vmap``.
When ``tests/fixtures/autograd_programs.npz`` was recorded these were autograd's, with
``jit`` the identity and ``vmap`` a Python loop stacking the results (autograd has
neither); tests/test_autograd_programs.py binds them to functrace's equivalents.
Data and initial parameters come from NumPy's seeded ``RandomState`` (an autograd
program draws with ``numpy.random``), identical for both. Optimizers are written out
(Adam, momentum) with the same arithmetic as ``autograd.misc.optimizers``. Each program
returns a dict of NumPy arrays. Nothing here imports autograd or functrace.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.optimize

# -- helpers shared by several programs ------------------------------------------------


def _adam(
    lib: Any,
    grad_fn: Callable[[Any, int], Any],
    params: Any,
    steps: int,
    lr: float,
    callback: Callable[[Any, int], None] | None = None,
) -> Any:
    """Adam on the flattened parameters, as autograd's optimizer: ``grad_fn(params, i)``."""
    x, unflatten = lib.flatten(params)
    x = np.asarray(x)
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for i in range(steps):
        g = np.asarray(lib.flatten(grad_fn(unflatten(x), i))[0])
        if callback is not None:
            callback(unflatten(x), i)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g**2 + b2 * v
        x = x - lr * (m / (1 - b1 ** (i + 1))) / (np.sqrt(v / (1 - b2 ** (i + 1))) + eps)
    return unflatten(x)


def _momentum(
    lib: Any, grad_fn: Callable[[Any, int], Any], params: Any, steps: int, lr: float, mass: float
) -> Any:
    """SGD with momentum on the flattened parameters, as autograd's ``sgd``."""
    x, unflatten = lib.flatten(params)
    x = np.asarray(x)
    velocity = np.zeros_like(x)
    for i in range(steps):
        g = np.asarray(lib.flatten(grad_fn(unflatten(x), i))[0])
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + lr * velocity
    return unflatten(x)


def _dense_params(
    rs: np.random.RandomState, sizes: list[int], scale: float
) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(scale * rs.randn(m, n), scale * rs.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]


def _two_arcs(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """1-D regression data on two separated intervals (a gap in the middle)."""
    rs = np.random.RandomState(seed)
    x = np.concatenate([np.linspace(0.0, 3.0, n // 2), np.linspace(6.0, 8.0, n - n // 2)])
    y = np.cos(x) + noise * rs.randn(n)
    return ((x - 4.0) / 2.0)[:, None], y / 2.0


def _spiral_arms(per_arm: int, arms: int, seed: int) -> np.ndarray:
    """2-D points on curved arms, built in place in NumPy (data, not parameters)."""
    rs = np.random.RandomState(seed)
    pts = rs.randn(per_arm * arms, 2) * np.array([0.3, 0.05])
    pts[:, 0] += 1.0
    arm = np.repeat(np.arange(arms), per_arm)
    angle = 2 * np.pi * arm / arms + 0.4 * np.exp(pts[:, 0])
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([c * pts[:, 0] - s * pts[:, 1], s * pts[:, 0] + c * pts[:, 1]], axis=1)


def _rbf_kernel(lib: Any) -> Callable[[Any, Any, Any], Any]:
    anp = lib.numpy

    def kernel(theta: Any, a: Any, b: Any) -> Any:
        # theta = [log output scale, log length scale per input dimension]
        ell = anp.exp(theta[1:])
        d = anp.expand_dims(a / ell, 1) - anp.expand_dims(b / ell, 0)
        return anp.exp(theta[0]) * anp.exp(-0.5 * anp.sum(d**2, axis=2))

    return kernel


def _gp(lib: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """GP regression with a constant mean: ``params = [mean, log noise, *kernel theta]``."""
    anp = lib.numpy
    mvn = lib.scipy.stats.multivariate_normal
    kernel = _rbf_kernel(lib)

    def parts(params: Any) -> tuple[Any, Any, Any]:
        return params[0], anp.exp(params[1]) + 1e-4, params[2:]

    def log_marginal(params: Any, x: Any, y: Any) -> Any:
        mean, noise, theta = parts(params)
        k = kernel(theta, x, x) + noise * anp.eye(len(y))
        return mvn.logpdf(y, mean * anp.ones(len(y)), k)

    def predict(params: Any, x: Any, y: Any, xs: Any) -> tuple[Any, Any]:
        mean, noise, theta = parts(params)
        k = kernel(theta, x, x) + noise * anp.eye(len(y))
        ks = kernel(theta, x, xs)
        w = anp.linalg.solve(k, ks)
        return mean + anp.dot(w.T, y - mean), kernel(theta, xs, xs) - anp.dot(w.T, ks)

    return log_marginal, predict


def _as_arrays(**values: Any) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in values.items()}


# -- the programs ----------------------------------------------------------------------


def logistic_regression(lib: Any) -> dict[str, np.ndarray]:
    """A tanh-squashed logistic regression on boolean labels: jitted gradient steps with
    ``w -= lr * g``, the Hessian at the end, and per-weight-vector gradients by vmap."""
    anp = lib.numpy
    x = np.array([[0.5, 1.1, 0.8], [0.9, -1.1, 0.2], [0.5, 0.1, -1.3], [0.7, -2.5, 1.4]])
    labels = np.array([True, True, False, True])

    def nll(w: Any) -> Any:
        p = 0.5 * (anp.tanh(anp.dot(x, w)) + 1.0)
        return -anp.sum(anp.log(p * labels + (1 - p) * (1 - labels)))

    step = lib.jit(lib.grad(nll))
    w = anp.array([0.0, 0.0, 0.0])
    losses = [nll(w)]
    for _ in range(25):
        w -= 0.05 * step(w)
        losses.append(nll(w))
    ws = np.random.RandomState(1).randn(3, 3)
    return _as_arrays(
        losses=losses,
        w=w,
        hessian=lib.hessian(nll)(w),
        per_w_grads=lib.vmap(lib.grad(nll))(ws),
    )


def taylor_sine(lib: Any) -> dict[str, np.ndarray]:
    """sin and a Taylor series that stops when its terms get small (Python control flow
    on values inside grad), with first, second and third derivatives point by point."""
    anp = lib.numpy

    def series(x: Any) -> Any:
        term, total = x, x
        for k in range(1, 200):
            term = -term * x**2 / ((2 * k) * (2 * k + 1))
            total = total + term
            if anp.abs(term) < 0.2:
                break
        return total

    xs = np.linspace(-4.0, 4.0, 5)
    d1, d2 = lib.grad(anp.sin), lib.grad(lib.grad(anp.sin))
    s1, s2 = lib.grad(series), lib.grad(lib.grad(series))
    return _as_arrays(
        sin_d1=[d1(x) for x in xs],
        sin_d2=[d2(x) for x in xs],
        series=[series(x) for x in xs],
        series_d1=[s1(x) for x in xs],
        series_d2=[s2(x) for x in xs],
        series_d3=lib.grad(s2)(2.5),
    )


def tanh_derivatives(lib: Any) -> dict[str, np.ndarray]:
    """tanh written with exponentials and four nested elementwise gradients of it, and the
    same derivatives as vmap of nested grad of the scalar function."""
    anp = lib.numpy

    def tanh(x: Any) -> Any:
        return (1.0 - anp.exp(-2.0 * x)) / (1.0 + anp.exp(-2.0 * x))

    eg = lib.elementwise_grad
    xs = np.linspace(-4.0, 4.0, 13)
    g = lib.grad
    return _as_arrays(
        d1=eg(tanh)(xs),
        d2=eg(eg(tanh))(xs),
        d3=eg(eg(eg(tanh)))(xs),
        d4=eg(eg(eg(eg(tanh))))(xs),
        d4_vmap=lib.vmap(g(g(g(g(tanh)))))(xs),
    )


def rosenbrock_cg(lib: Any) -> dict[str, np.ndarray]:
    """SciPy's conjugate gradients on the Rosenbrock function with value_and_grad as the
    objective (``jac=True``), then the Hessian at the point reached."""

    def banana(p: Any) -> Any:
        return 100.0 * (p[1] - p[0] ** 2) ** 2 + (1.0 - p[0]) ** 2

    res = scipy.optimize.minimize(
        lib.value_and_grad(banana),
        np.array([-0.5, 0.8]),
        jac=True,
        method="CG",
        options={"maxiter": 12},
    )
    return _as_arrays(x=res.x, fun=res.fun, hessian=lib.hessian(banana)(res.x))


def negative_binomial_newton(lib: Any) -> dict[str, np.ndarray]:
    """Maximum likelihood of a negative binomial's r by SciPy's Newton-Halley iteration on
    the profile score, with grad(grad) and grad(grad(grad)) of ``gammaln`` sums as the
    derivatives, and the gradient in (r, p) at once (two argnums)."""
    anp = lib.numpy
    gammaln = lib.scipy.special.gammaln
    rs = np.random.RandomState(0)
    counts = rs.poisson(rs.gamma(4.0, 1.5, size=150)).astype(float)

    def loglik(r: Any, p: Any) -> Any:
        return anp.sum(
            gammaln(r + counts)
            - gammaln(r)
            - gammaln(counts + 1)
            + counts * anp.log(p)
            + r * anp.log(1 - p)
        )

    def best_p(r: Any) -> Any:
        return anp.sum(counts) / anp.sum(r + counts)

    def score(r: Any) -> Any:
        return lib.grad(loglik)(r, best_p(r))

    r = scipy.optimize.newton(score, 1.0, fprime=lib.grad(score), fprime2=lib.grad(lib.grad(score)))
    g_r, g_p = lib.grad(loglik, (0, 1))(2.0, 0.5)
    return _as_arrays(r=r, p=best_p(r), g_r=g_r, g_p=g_p, curvature=lib.grad(score)(2.0))


def mlp_classifier(lib: Any) -> dict[str, np.ndarray]:
    """A tanh MLP with log-softmax outputs (logsumexp with keepdims), an L2 penalty on the
    flattened parameters, minibatches picked by the step number and Adam; accuracy by
    argmax."""
    anp = lib.numpy
    logsumexp = lib.scipy.special.logsumexp
    rs = np.random.RandomState(3)
    x = rs.rand(48, 10)
    onehot = np.eye(4)[rs.randint(0, 4, 48)]
    params = _dense_params(np.random.RandomState(0), [10, 8, 6, 4], 0.1)

    def log_probs(params: Any, x: Any) -> Any:
        for w, b in params:
            out = anp.dot(x, w) + b
            x = anp.tanh(out)
        return out - logsumexp(out, axis=1, keepdims=True)

    def objective(params: Any, x: Any, t: Any) -> Any:
        flat, _ = lib.flatten(params)
        return -(anp.sum(log_probs(params, x) * t) - 0.5 * anp.dot(flat, flat))

    grad_fn = lib.grad(objective)

    def batch_grad(params: Any, i: int) -> Any:
        rows = slice(12 * (i % 4), 12 * (i % 4 + 1))
        return grad_fn(params, x[rows], onehot[rows])

    acc = []

    def record(params: Any, i: int) -> None:
        if i % 4 == 0:
            hits = anp.argmax(log_probs(params, x), axis=1) == anp.argmax(onehot, axis=1)
            acc.append(anp.mean(hits))

    trained = _adam(lib, batch_grad, params, 8, 0.05, record)
    return _as_arrays(
        accuracy=acc, w0=trained[0][0], b2=trained[2][1], objective=objective(trained, x, onehot)
    )


def mlp_regression(lib: Any) -> dict[str, np.ndarray]:
    """Regression with a Gaussian likelihood and a Gaussian prior on the flattened weights
    (``norm.logpdf``), the gradient at the start and Adam steps."""
    anp = lib.numpy
    norm = lib.scipy.stats.norm
    x, y = _two_arcs(30, 0.1, 0)
    y = y[:, None]
    params = _dense_params(np.random.RandomState(0), [1, 5, 5, 1], 0.2)

    def predict(params: Any, h: Any) -> Any:
        for w, b in params:
            out = anp.dot(h, w) + b
            h = anp.tanh(out)
        return out

    def neg_log_post(params: Any, step: int) -> Any:
        flat, _ = lib.flatten(params)
        prior = anp.sum(norm.logpdf(flat, 0.0, 3.0))
        return -(anp.sum(norm.logpdf(predict(params, x), y, 0.1)) + prior)

    g0 = lib.grad(neg_log_post)(params, 0)
    values = []
    trained = _adam(
        lib,
        lib.grad(neg_log_post),
        params,
        10,
        0.02,
        lambda p, i: values.append(neg_log_post(p, i)),
    )
    return _as_arrays(values=values, g0_w0=g0[0][0], g0_b2=g0[2][1], w1=trained[1][0])


def _svi_objective(
    lib: Any, log_density: Callable[[Any], Any], dim: int, samples: int, seed: int
) -> Callable[[Any, int], Any]:
    """Negative ELBO of a diagonal Gaussian, reparameterised, with fresh draws from a
    ``RandomState`` on every call (the step number varies from call to call)."""
    anp = lib.numpy
    rs = np.random.RandomState(seed)

    def neg_elbo(params: Any, step: int) -> Any:
        mean, log_std = params[:dim], params[dim:]
        z = rs.randn(samples, dim) * anp.exp(log_std) + mean
        entropy = 0.5 * dim * (1.0 + anp.log(2 * anp.pi)) + anp.sum(log_std)
        return -(entropy + anp.mean(log_density(z)))

    return neg_elbo


def black_box_svi(lib: Any) -> dict[str, np.ndarray]:
    """Black-box variational inference on a funnel-shaped 2-D density (``norm.logpdf``
    with a scale depending on the point), Adam, and the fitted Gaussian's ``mvn.pdf``."""
    anp = lib.numpy
    norm = lib.scipy.stats.norm
    mvn = lib.scipy.stats.multivariate_normal

    def funnel(z: Any) -> Any:
        return norm.logpdf(z[:, 1], 0.0, 1.35) + norm.logpdf(z[:, 0], 0.0, anp.exp(z[:, 1]))

    neg_elbo = _svi_objective(lib, funnel, 2, 100, 0)
    bounds = []
    start = np.concatenate([-np.ones(2), -3.0 * np.ones(2)])
    fit = _adam(
        lib, lib.grad(neg_elbo), start, 12, 0.1, lambda p, i: bounds.append(-neg_elbo(p, i))
    )
    pts = np.array([[0.1, -0.3], [-1.0, 0.5], [0.0, 0.0]])
    return _as_arrays(
        bounds=bounds, fit=fit, q_pdf=mvn.pdf(pts, fit[:2], anp.diag(anp.exp(2 * fit[2:])))
    )


def bayesian_neural_net(lib: Any) -> dict[str, np.ndarray]:
    """Variational inference over the weights of a small RBF-activation net, evaluated for
    a batch of weight samples at once (``einsum('snd,sdo->sno')``, layers unpacked from
    one flat vector by a generator), then predictions of sampled nets."""
    anp = lib.numpy
    x, y = _two_arcs(16, 0.1, 0)
    y = y[:, None]
    shapes = [(1, 5), (5, 5), (5, 1)]
    n_weights = sum((m + 1) * n for m, n in shapes)

    def layers(ws: Any) -> Any:
        for m, n in shapes:
            yield ws[:, : m * n].reshape((-1, m, n)), ws[:, m * n : (m + 1) * n].reshape((-1, 1, n))
            ws = ws[:, (m + 1) * n :]

    def predict(ws: Any, inputs: Any) -> Any:
        h = anp.expand_dims(inputs, 0)
        for w, b in layers(ws):
            out = anp.einsum("snd,sdo->sno", h, w) + b
            h = anp.exp(-(out**2))
        return out

    def log_posterior(ws: Any) -> Any:
        prior = -0.1 * anp.sum(ws**2, axis=1)
        return prior - anp.sum((predict(ws, x) - y) ** 2, axis=1)[:, 0] / 0.01

    neg_elbo = _svi_objective(lib, log_posterior, n_weights, 4, 0)
    start = np.concatenate([np.random.RandomState(0).randn(n_weights), -5.0 * np.ones(n_weights)])
    bounds = []
    fit = _adam(lib, lib.grad(neg_elbo), start, 6, 0.1, lambda p, i: bounds.append(-neg_elbo(p, i)))
    sampled = (
        np.random.RandomState(5).randn(3, n_weights) * anp.exp(fit[n_weights:]) + fit[:n_weights]
    )
    return _as_arrays(
        bounds=bounds, fit=fit, outputs=predict(sampled, np.linspace(-2, 2, 5)[:, None])
    )


def natural_gradient_svi(lib: Any) -> dict[str, np.ndarray]:
    """Variational inference of means and log-scales of independent Gaussians: Adam on the
    plain gradient, and momentum SGD on the gradient divided by the Fisher diagonal."""
    anp = lib.numpy
    norm = lib.scipy.stats.norm
    rs = np.random.RandomState(42)
    obs = rs.randn(4, 4).dot(rs.randn(4))
    dim = 8

    def log_density(z: Any) -> Any:
        mu, log_sigma = z[:, :4], z[:, 4:]
        prior = anp.sum(norm.logpdf(log_sigma, 0.0, 1.35), axis=1)
        return prior + anp.sum(norm.logpdf(obs, mu, anp.exp(log_sigma)), axis=1)

    start = np.concatenate([-np.ones(dim), -3.0 * np.ones(dim)])
    plain = _svi_objective(lib, log_density, dim, 30, 0)
    fit_adam = _adam(lib, lib.grad(plain), start, 8, 0.25)
    natural = _svi_objective(lib, log_density, dim, 30, 0)
    g_natural = lib.grad(natural)

    def natural_grad(params: Any, i: int) -> Any:
        fisher = anp.concatenate([anp.exp(-2.0 * params[dim:]), 2.0 * anp.ones(dim)])
        return g_natural(params, i) / fisher

    fit_natural = _momentum(lib, natural_grad, start, 8, 0.25, 0.001)
    return _as_arrays(adam=fit_adam, natural=fit_natural, elbo=-plain(fit_natural, 99))


def mixture_svi(lib: Any) -> dict[str, np.ndarray]:
    """Variational inference with a mixture of diagonal Gaussians: each component's ELBO by
    reparameterised samples against the mixture's density (logsumexp over components
    along axis 1), weighted by softmax weights; Adam."""
    anp = lib.numpy
    norm = lib.scipy.stats.norm
    logsumexp = lib.scipy.special.logsumexp
    k, dim, samples = 2, 2, 6
    rs = np.random.RandomState(0)

    def target(z: Any) -> Any:
        s1 = norm.logpdf(z[:, 1], 0.0, 1.35) + norm.logpdf(z[:, 0], -0.5, anp.exp(z[:, 1]))
        s2 = norm.logpdf(z[:, 1], 0.1, 1.35) + norm.logpdf(z[:, 0], 0.5, anp.exp(z[:, 1]))
        return anp.logaddexp(s1, s2)

    def unpack(params: Any) -> tuple[Any, Any]:
        return params[:k] - logsumexp(params[:k]), anp.reshape(params[k:], (k, -1))

    def log_q(params: Any, z: Any) -> Any:
        log_w, comps = unpack(params)
        per = [anp.sum(norm.logpdf(z, c[:dim], anp.exp(c[dim:])), axis=-1) for c in comps]
        return logsumexp(anp.vstack(per).T + log_w, axis=1, keepdims=False)

    def neg_elbo(params: Any, step: int) -> Any:
        log_w, comps = unpack(params)
        elbos = []
        for c in comps:
            z = rs.randn(samples, dim) * anp.exp(c[dim:]) + c[:dim]
            elbos.append(anp.mean(anp.reshape(target(z) - log_q(params, z), (samples, -1))))
        return -anp.sum(anp.stack(elbos) * anp.exp(log_w))

    init = np.random.RandomState(1)
    start = np.concatenate(
        [np.ones(k)]
        + [
            np.concatenate([-1 + 0.1 * init.randn(dim), -3 + 0.1 * init.randn(dim)])
            for _ in range(k)
        ]
    )
    fit = _adam(lib, lib.grad(neg_elbo), start, 3, 0.1)
    return _as_arrays(fit=fit, log_q=log_q(fit, np.array([[0.0, 0.0], [-0.5, -1.0]])))


def gaussian_process(lib: Any) -> dict[str, np.ndarray]:
    """GP regression: ``mvn.logpdf`` of a kernel matrix built from the hyperparameters,
    value_and_grad as SciPy's CG objective, the Hessian at the start, gradients for
    several parameter vectors by vmap, then the posterior mean and marginal std."""
    anp = lib.numpy
    log_marginal, predict = _gp(lib)
    x, y = _two_arcs(16, 0.1, 0)

    def objective(params: Any) -> Any:
        return -log_marginal(params, x, y)

    start = 0.1 * np.random.RandomState(0).randn(4)
    vg = lib.value_and_grad(objective)
    value, grad = vg(start)
    res = scipy.optimize.minimize(vg, start, jac=True, method="CG", options={"maxiter": 4})
    mean, cov = predict(res.x, x, y, np.linspace(-3.0, 3.0, 6)[:, None])
    batch = start + 0.1 * np.random.RandomState(1).randn(2, 4)
    return _as_arrays(
        value=value,
        grad=grad,
        hessian=lib.hessian(objective)(start),
        batch_grads=lib.vmap(lib.grad(objective))(batch),
        x=res.x,
        mean=mean,
        std=anp.sqrt(anp.diag(cov)),
    )


def deep_gaussian_process(lib: Any) -> dict[str, np.ndarray]:
    """Two stacked GPs with the hidden values as parameters (``atleast_2d(h).T`` as the
    second layer's inputs), gradient steps on the joint marginal likelihood and a
    prediction through both layers."""
    anp = lib.numpy
    log_marginal, predict = _gp(lib)
    x = np.linspace(-2.0, 2.0, 10)[:, None]
    y = np.sign(x[:, 0]) + 0.1 * np.random.RandomState(0).randn(10)

    def split(params: Any) -> tuple[Any, Any, Any]:
        return params[:4], params[4:8], params[8:]

    def objective(params: Any) -> Any:
        p1, p2, h = split(params)
        return -(log_marginal(p1, x, h) + log_marginal(p2, anp.atleast_2d(h).T, y))

    params = 0.1 * np.random.RandomState(0).randn(18)
    for _ in range(3):
        params = params - 0.01 * lib.grad(objective)(params)
    p1, p2, h = split(params)
    xs = np.linspace(-2.5, 2.5, 4)[:, None]
    h_mean, _ = predict(p1, x, h, xs)
    mean, cov = predict(p2, anp.atleast_2d(h).T, y, anp.atleast_2d(h_mean).T)
    return _as_arrays(params=params, value=objective(params), mean=mean, cov=cov)


def gplvm(lib: Any) -> dict[str, np.ndarray]:
    """A GP latent variable model: 2-D latents and per-output GP hyperparameters in one
    vector, a standard normal prior on the latents, gradient and a few CG iterations."""
    anp = lib.numpy
    norm = lib.scipy.stats.norm
    log_marginal, _ = _gp(lib)
    data = _spiral_arms(5, 3, 0)
    n = data.shape[0]

    def objective(params: Any) -> Any:
        gp_params = anp.reshape(params[:10], (2, 5))
        latents = anp.reshape(params[10:], (n, 2))
        fit = sum(log_marginal(gp_params[i], latents, data[:, i]) for i in range(2))
        return -fit - anp.sum(norm.logpdf(latents))

    start = 0.1 * np.random.RandomState(1).randn(10 + 2 * n)
    res = scipy.optimize.minimize(
        lib.value_and_grad(objective), start, jac=True, method="CG", options={"maxiter": 3}
    )
    return _as_arrays(data=data, grad=lib.grad(objective)(start), x=res.x)


def bayesian_optimization(lib: Any) -> dict[str, np.ndarray]:
    """Bayesian optimisation of a 1-D function: a GP posterior, the expected improvement
    (``norm.cdf``/``norm.pdf``) maximised by L-BFGS-B with bounds from a few starts, its
    gradient through ``atleast_2d`` of the query point; the loss is summed to a scalar."""
    anp = lib.numpy
    norm = lib.scipy.stats.norm
    _, predict = _gp(lib)
    params = np.array([0.0, -2.0, 0.0, -1.0])

    def f(x: Any) -> Any:
        return anp.sum(x * anp.sin(10.0 * x) + x) - 1.0

    xs = np.array([[0.2], [0.9]])
    ys = np.array([f(np.array([0.2])), f(np.array([0.9]))])
    for _ in range(2):
        xs_now, ys_now = xs, ys

        def improvement(q: Any, xs_now: Any = xs_now, ys_now: Any = ys_now) -> Any:
            mean, cov = predict(params, xs_now, ys_now, anp.atleast_2d(q))
            std, best = anp.sqrt(anp.diag(cov)), anp.max(ys_now)
            z = (mean - best) * norm.cdf(mean, best, std) - std * norm.pdf(mean, best, std)
            return anp.sum(best - z)

        objective = lib.value_and_grad(lambda q, imp=improvement: -imp(q))
        found = []
        for start in (0.1, 0.55, 1.0):
            res = scipy.optimize.minimize(
                objective,
                np.array([start]),
                jac=True,
                method="L-BFGS-B",
                bounds=[(0.0, 1.1)],
                options={"maxiter": 8},
            )
            found.append((float(improvement(res.x)), res.x))
        nxt = max(found, key=lambda t: t[0])[1]
        xs = np.concatenate([xs, anp.atleast_2d(nxt)])
        ys = np.concatenate([ys, np.reshape(f(nxt), (1,))])
    return _as_arrays(xs=xs, ys=ys, ei_grad=lib.grad(improvement)(np.array([0.4])))


def gaussian_mixture_newton(lib: Any) -> dict[str, np.ndarray]:
    """A Gaussian mixture's negative log-likelihood on dict parameters flattened (keys in
    sorted order), covariances ``c.T @ c``, ``mvn.logpdf`` per component, logsumexp over
    the stacked components: a Hessian-vector product, the Hessian, a damped Newton step."""
    anp = lib.numpy
    mvn = lib.scipy.stats.multivariate_normal
    logsumexp = lib.scipy.special.logsumexp
    rs = np.random.RandomState(0)
    params = {
        "weights": 0.1 * rs.randn(3),
        "means": 0.5 * rs.randn(3, 2),
        "chol": np.zeros((3, 2, 2)) + np.eye(2),
    }
    data = _spiral_arms(8, 3, 0)

    def nll(params: Any) -> Any:
        log_w = params["weights"] - logsumexp(params["weights"])
        rows = [
            lw + mvn.logpdf(data, m, anp.dot(c.T, c))
            for lw, m, c in zip(log_w, params["means"], params["chol"])
        ]
        return -anp.sum(logsumexp(anp.vstack(rows), axis=0))

    x0, unflatten = lib.flatten(params)
    x0 = np.asarray(x0)

    def flat_nll(x: Any) -> Any:
        return nll(unflatten(x))

    hvp = lib.hessian_vector_product(flat_nll)
    v = np.linspace(-1.0, 1.0, x0.size)
    hessian = lib.hessian(flat_nll)(x0)
    x1 = x0 - np.linalg.solve(hessian + 5.0 * np.eye(x0.size), lib.grad(flat_nll)(x0))
    return _as_arrays(x0=x0, hvp=hvp(x0, v), hessian=hessian, x1=x1, value=flat_nll(x1))


def hmm_em(lib: Any) -> dict[str, np.ndarray]:
    """EM for a discrete HMM where the E step is the gradient of the log partition function
    (the forward recursion with logsumexp) with respect to the log parameters, a list."""
    anp = lib.numpy
    logsumexp = lib.scipy.special.logsumexp
    symbols = {c: i for i, c in enumerate(string.ascii_lowercase + " ")}
    lines = ["hidden markov", "the forward pass", "a b c"]
    seqs = [np.array([symbols[c] for c in line]) for line in lines]
    rs = np.random.RandomState(0)

    def normalize(a: Any) -> Any:
        total = a.sum(-1, keepdims=True)
        return a / anp.where(total > 0.0, total, 1.0)

    def log_partition(log_params: Any) -> Any:
        log_pi, log_a, log_b = log_params
        total = 0.0
        for seq in seqs:
            alpha = log_pi
            for s in seq:
                alpha = logsumexp(alpha[:, None] + log_a, axis=0) + log_b[:, s]
            total = total + logsumexp(alpha)
        return total

    params = [normalize(rs.rand(3)), normalize(rs.rand(3, 3)), normalize(rs.rand(3, 27))]
    lls = []
    for _ in range(3):
        ll, counts = lib.value_and_grad(log_partition)([anp.log(p) for p in params])
        lls.append(ll)
        params = [normalize(c + 1e-3) for c in counts]  # smoothed: no log(0) next round
    return _as_arrays(lls=lls, pi=params[0], a=params[1], b=params[2])


def ica_student_t(lib: Any) -> dict[str, np.ndarray]:
    """Independent component analysis with a Student-t likelihood (``t.logpdf`` with df,
    loc and scale): weights, latents and the log noise scale in one vector; CG steps."""
    anp = lib.numpy
    t = lib.scipy.stats.t
    rs = np.random.RandomState(0)
    mixing = np.zeros((8, 2))
    for i in range(2):
        mixing[:, i] = np.sin(np.linspace(0.0, 4.0 + 3.2 * i, 8))
    sources = rs.randn(2, 12)
    observed = mixing.dot(sources).T + rs.randn(12, 8)

    def objective(params: Any) -> Any:
        w = anp.reshape(params[:16], (8, 2))
        z = anp.reshape(params[16:40], (2, 12))
        pred = anp.dot(w, z).T
        return -anp.sum(t.logpdf(pred, 2.4, observed, anp.exp(params[-1]))) / 12

    start = np.random.RandomState(1).randn(41)
    res = scipy.optimize.minimize(
        lib.value_and_grad(objective), start, jac=True, method="CG", options={"maxiter": 3}
    )
    return _as_arrays(grad=lib.grad(objective)(start), x=res.x)


_TEXT = ["def f(x):", "    return x + 1", "import this", "for i in range(3):"]


def _one_hot_text(lines: list[str], length: int, chars: int) -> np.ndarray:
    """(time, line, char) one-hot codes, padded with spaces; built in NumPy in place."""
    out = np.zeros((length, len(lines), chars))
    for j, line in enumerate(lines):
        codes = np.array([ord(c) for c in (line + " " * length)[:length]])
        out[:, j, :] = np.array(codes[:, None] == np.arange(chars)[None, :], dtype=int)
    return out


def char_rnn(lib: Any) -> dict[str, np.ndarray]:
    """A character RNN: inputs and a bias column joined by ``hstack``, the initial state
    repeated over sequences, log-softmax by logsumexp, a Python loop over time steps,
    a jitted gradient and Adam."""
    anp = lib.numpy
    logsumexp = lib.scipy.special.logsumexp
    chars = 128
    seqs = _one_hot_text(_TEXT, 7, chars)
    rs = np.random.RandomState(0)
    params = {
        "h0": 0.01 * rs.randn(1, 6),
        "rec": 0.01 * rs.randn(chars + 6 + 1, 6),
        "out": 0.01 * rs.randn(6 + 1, chars),
    }

    def affine(w: Any, *parts: Any) -> Any:
        ones = anp.ones((parts[0].shape[0], 1))
        return anp.dot(anp.hstack(parts + (ones,)), w)

    def log_probs(params: Any, seqs: Any) -> list[Any]:
        h = anp.repeat(params["h0"], seqs.shape[1], axis=0)
        outs = []
        for x in seqs:
            logits = affine(params["out"], h)
            outs.append(logits - logsumexp(logits, axis=1, keepdims=True))
            h = anp.tanh(affine(params["rec"], x, h))
        return outs

    def loss(params: Any) -> Any:
        total = 0.0
        for lp, target in zip(log_probs(params, seqs), seqs):
            total = total + anp.sum(lp * target)
        return -total / (seqs.shape[0] * seqs.shape[1])

    grad_fn = lib.jit(lib.grad(loss))
    losses = []
    trained = _adam(
        lib, lambda p, i: grad_fn(p), params, 4, 0.1, lambda p, i: losses.append(loss(p))
    )
    prompt = _one_hot_text(["def"], 3, chars)
    return _as_arrays(losses=losses, rec=trained["rec"], last=log_probs(trained, prompt)[-1])


def char_lstm(lib: Any) -> dict[str, np.ndarray]:
    """A character LSTM (gates squashed by ``0.5 * (tanh + 1)``): its loss over a padded
    batch of lines and Adam steps."""
    anp = lib.numpy
    logsumexp = lib.scipy.special.logsumexp
    chars, hid = 128, 4
    seqs = _one_hot_text(_TEXT, 6, chars)
    rs = np.random.RandomState(0)
    params = {k: 0.1 * rs.randn(chars + hid + 1, hid) for k in ("cand", "forget", "inp", "outg")}
    params.update(h0=0.1 * rs.randn(1, hid), c0=0.1 * rs.randn(1, hid))
    params["read"] = 0.1 * rs.randn(hid + 1, chars)

    def affine(w: Any, *parts: Any) -> Any:
        ones = anp.ones((parts[0].shape[0], 1))
        return anp.dot(anp.hstack(parts + (ones,)), w)

    def gate(w: Any, x: Any, h: Any) -> Any:
        return 0.5 * (anp.tanh(affine(w, x, h)) + 1.0)

    def loss(params: Any) -> Any:
        h = anp.repeat(params["h0"], seqs.shape[1], axis=0)
        c = anp.repeat(params["c0"], seqs.shape[1], axis=0)
        total = 0.0
        for x in seqs:
            logits = affine(params["read"], h)
            total = total + anp.sum((logits - logsumexp(logits, axis=1, keepdims=True)) * x)
            cand = anp.tanh(affine(params["cand"], x, h))
            c = c * gate(params["forget"], x, h) + gate(params["inp"], x, h) * cand
            h = gate(params["outg"], x, h) * anp.tanh(c)
        return -total / (seqs.shape[0] * seqs.shape[1])

    losses = []
    trained = _adam(
        lib, lambda p, i: lib.grad(loss)(p), params, 3, 0.1, lambda p, i: losses.append(loss(p))
    )
    return _as_arrays(losses=losses, forget=trained["forget"], c0=trained["c0"])


def convnet(lib: Any) -> dict[str, np.ndarray]:
    """A small convnet on a flat parameter vector sliced into named shapes: valid 2-D
    convolutions (``scipy.signal.convolve``, summed over input channels), a broadcast
    bias, max pooling by reshape and two ``max`` reductions, a dense log-softmax layer;
    the loss's gradient, jitted, and momentum steps."""
    anp = lib.numpy
    convolve = lib.scipy.signal.convolve
    shapes = {"k": (1, 2, 3, 3), "kb": (1, 2, 1, 1), "w": (18, 3), "b": (3,)}
    offsets = np.cumsum([0] + [int(np.prod(s)) for s in shapes.values()])
    rs = np.random.RandomState(0)
    images = rs.randn(3, 1, 8, 8)
    labels = np.eye(3)[[0, 2, 1]]

    def get(flat: Any, name: str) -> Any:
        i = list(shapes).index(name)
        return anp.reshape(flat[offsets[i] : offsets[i + 1]], shapes[name])

    def conv(x: Any, k: Any) -> Any:
        return anp.stack(
            [
                anp.stack(
                    [
                        sum(convolve(im[c], k[c, o], mode="valid") for c in range(k.shape[0]))
                        for o in range(k.shape[1])
                    ]
                )
                for im in x
            ]
        )

    def log_probs(flat: Any, x: Any) -> Any:
        h = anp.tanh(conv(x, get(flat, "k")) + get(flat, "kb"))
        n, c, rows, cols = h.shape
        h = anp.max(anp.max(h.reshape((n, c, rows // 2, 2, cols // 2, 2)), axis=3), axis=4)
        h = h.reshape((n, -1))
        logits = anp.dot(h, get(flat, "w")) + get(flat, "b")
        return logits - anp.log(anp.sum(anp.exp(logits), axis=1, keepdims=True))

    def loss(flat: Any, x: Any, t: Any) -> Any:
        return anp.dot(flat, flat) - anp.sum(log_probs(flat, x) * t)

    flat = 0.3 * rs.randn(int(offsets[-1]))
    g = lib.jit(lib.grad(loss))
    grad0 = g(flat, images, labels)
    trained = _momentum(lib, lambda p, i: g(p, images, labels), flat, 3, 0.05, 0.9)
    return _as_arrays(loss=loss(flat, images, labels), grad=grad0, trained=trained)


def _batchnorm(anp: Any, a: Any) -> Any:
    return (a - anp.mean(a, axis=0, keepdims=True)) / (anp.std(a, axis=0, keepdims=True) + 1)


def variational_autoencoder(lib: Any) -> dict[str, np.ndarray]:
    """A VAE on +-1 pixel vectors: batch-normalised ReLU encoder and decoder, diagonal
    Gaussian posterior sampled with a ``RandomState`` inside the objective, Bernoulli
    likelihood by ``logaddexp``, ``norm.logpdf`` densities, ``expit`` outputs; Adam."""
    anp = lib.numpy
    norm = lib.scipy.stats.norm
    expit = lib.scipy.special.expit
    z_dim, d = 2, 10
    rs = np.random.RandomState(5)
    pixels = np.where(rs.rand(24, d) > 0.5, 1.0, -1.0)
    gen = _dense_params(np.random.RandomState(0), [z_dim, 6, d], 0.1)
    enc = _dense_params(np.random.RandomState(1), [d, 6, 2 * z_dim], 0.1)
    noise = np.random.RandomState(0)

    def net(params: Any, h: Any) -> Any:
        for w, b in params[:-1]:
            h = anp.maximum(0, _batchnorm(anp, anp.dot(h, w) + b))
        w, b = params[-1]
        return anp.dot(h, w) + b

    def log_normal(x: Any, mu: Any, log_std: Any) -> Any:
        return anp.sum(norm.logpdf(x, mu, anp.exp(log_std)), axis=-1)

    def neg_elbo(both: Any, i: int) -> Any:
        gen, enc = both
        x = pixels[8 * (i % 3) : 8 * (i % 3 + 1)]
        q = net(enc, x)
        mu, log_std = q[:, :z_dim], q[:, z_dim:]
        z = noise.randn(*mu.shape) * anp.exp(log_std) + mu
        lik = -anp.sum(anp.logaddexp(0, -net(gen, z) * x), axis=-1)
        return -anp.mean(log_normal(z, 0, 0) + lik - log_normal(z, mu, log_std)) / d

    values = []
    gen, enc = _adam(
        lib, lib.grad(neg_elbo), (gen, enc), 5, 0.01, lambda p, i: values.append(neg_elbo(p, i))
    )
    return _as_arrays(
        values=values,
        gen_w0=gen[0][0],
        enc_b1=enc[1][1],
        samples=expit(net(gen, noise.randn(3, z_dim))),
    )


def gan_minimax(lib: Any) -> dict[str, np.ndarray]:
    """A GAN trained by a two-sided Adam: the gradient in both nets' parameters at once
    (``grad(f, (0, 1))``), uniform noise drawn inside the objective, ReLU and batch norm,
    log-sigmoid by ``logaddexp``, flattening of each side's parameters."""
    anp = lib.numpy
    rs = np.random.RandomState(2)
    real = rs.rand(24, 6)
    gen = _dense_params(np.random.RandomState(0), [3, 5, 5, 6], 0.1)
    disc = _dense_params(np.random.RandomState(1), [6, 5, 1], 0.1)
    noise = np.random.RandomState(0)

    def net(params: Any, h: Any) -> Any:
        w, b = params[0]
        h = anp.maximum(0, anp.dot(h, w) + b)
        for w, b in params[1:-1]:
            h = anp.maximum(0, _batchnorm(anp, anp.dot(h, w) + b))
        w, b = params[-1]
        return anp.dot(h, w) + b

    def log_sigmoid(x: Any) -> Any:
        return x - anp.logaddexp(0, x)

    def value(gen: Any, disc: Any, i: int) -> Any:
        fake = 0.5 * (anp.tanh(net(gen, noise.rand(8, 3))) + 1.0)
        batch = real[8 * (i % 3) : 8 * (i % 3 + 1)]
        return anp.mean(log_sigmoid(net(disc, batch))) - anp.mean(log_sigmoid(net(disc, fake)))

    both = lib.grad(value, (0, 1))
    xg, unflat_g = lib.flatten(gen)
    xd, unflat_d = lib.flatten(disc)
    xg, xd = np.asarray(xg), np.asarray(xd)
    state = [np.zeros_like(xg), np.zeros_like(xg), np.zeros_like(xd), np.zeros_like(xd)]
    for i in range(4):
        gg, gd = both(unflat_g(xg), unflat_d(xd), i)
        gg, gd = np.asarray(lib.flatten(gg)[0]), np.asarray(lib.flatten(gd)[0])
        for j, (g, sign) in enumerate(((gg, -1.0), (gd, 1.0))):
            m = state[2 * j] = 0.1 * g + 0.9 * state[2 * j]
            v = state[2 * j + 1] = 0.001 * g**2 + 0.999 * state[2 * j + 1]
            step = 0.01 * (m / (1 - 0.9 ** (i + 1))) / (np.sqrt(v / (1 - 0.999 ** (i + 1))) + 1e-8)
            if j == 0:
                xg = xg + sign * step
            else:
                xd = xd + sign * step
    return _as_arrays(gen=xg, disc=xd, value=value(unflat_g(xg), unflat_d(xd), 0))


def _advect(anp: Any, f: Any, vx: Any, vy: Any) -> Any:
    """Semi-Lagrangian transport of ``f`` by (vx, vy): bilinear reads at the departure
    points, whose integer cells come from ``floor(...).astype(int)`` wrapped by ``mod``."""
    rows, cols = f.shape
    cy, cx = anp.meshgrid(anp.arange(rows), anp.arange(cols), indexing="ij")
    px, py = (cx - vx).ravel(), (cy - vy).ravel()
    x0, y0 = anp.floor(px).astype(int), anp.floor(py).astype(int)
    wx, wy = px - x0, py - y0
    x0, y0 = anp.mod(x0, cols), anp.mod(y0, rows)
    x1, y1 = anp.mod(x0 + 1, cols), anp.mod(y0 + 1, rows)
    top = (1 - wx) * f[y0, x0] + wx * f[y0, x1]
    bottom = (1 - wx) * f[y1, x0] + wx * f[y1, x1]
    return anp.reshape((1 - wy) * top + wy * bottom, (rows, cols))


def _shift_sum(anp: Any, a: Any) -> Any:
    return (
        anp.roll(a, 1, axis=0)
        + anp.roll(a, -1, axis=0)
        + anp.roll(a, 1, axis=1)
        + anp.roll(a, -1, axis=1)
    )


def smoke_advection(lib: Any) -> dict[str, np.ndarray]:
    """A smoke simulation in the stable-fluids style: velocities advected by themselves,
    made nearly divergence-free by Jacobi sweeps of ``roll``s (the update ``vx -= ...``),
    smoke advected by them; value_and_grad of a match to a target image in the initial
    velocities, and gradients for a batch of initial fields by vmap."""
    anp = lib.numpy
    n = 8
    yy, xx = np.mgrid[0:n, 0:n]
    smoke0 = np.exp(-((yy - 4.0) ** 2 + (xx - 3.0) ** 2) / 4.0)
    target = np.exp(-((yy - 3.0) ** 2 + (xx - 5.0) ** 2) / 3.0)

    def project(vx: Any, vy: Any) -> tuple[Any, Any]:
        div = -0.5 * (
            anp.roll(vx, -1, axis=1)
            - anp.roll(vx, 1, axis=1)
            + anp.roll(vy, -1, axis=0)
            - anp.roll(vy, 1, axis=0)
        )
        p = anp.zeros(vx.shape)
        for _ in range(4):
            p = (div + _shift_sum(anp, p)) / 4.0
        vx -= 0.5 * (anp.roll(p, -1, axis=1) - anp.roll(p, 1, axis=1))
        vy -= 0.5 * (anp.roll(p, -1, axis=0) - anp.roll(p, 1, axis=0))
        return vx, vy

    def mismatch(v: Any) -> Any:
        vx, vy = anp.reshape(v[: n * n], (n, n)), anp.reshape(v[n * n :], (n, n))
        smoke = anp.array(smoke0)
        for _ in range(2):
            vx, vy = project(_advect(anp, vx, vx, vy), _advect(anp, vy, vx, vy))
            smoke = _advect(anp, smoke, vx, vy)
        return anp.mean((smoke - target) ** 2)

    v0 = 0.6 * np.random.RandomState(0).randn(2 * n * n)
    value, grad = lib.value_and_grad(mismatch)(v0)
    batch = 0.6 * np.random.RandomState(1).randn(2, 2 * n * n)
    return _as_arrays(value=value, grad=grad, batch_grads=lib.vmap(lib.grad(mismatch))(batch))


def wing_occlusion(lib: Any) -> dict[str, np.ndarray]:
    """A flow past an obstacle whose shape is the parameter (a sigmoid occupancy, masked
    to a box built in NumPy): occluded Jacobi pressure sweeps and advection; the gradient
    of a lift-to-drag ratio with respect to every cell's occupancy."""
    anp = lib.numpy
    rows, cols = 6, 8
    box = np.zeros((rows, cols))
    box[1:5, 2:6] = 1.0
    start = -np.ones((rows, cols))
    start[2:4, 3:5] = 0.0

    def fill(f: Any, solid: Any) -> Any:
        free = 1 - solid
        around = (
            anp.roll(f, 1, axis=0) * anp.roll(free, 1, axis=0)
            + anp.roll(f, -1, axis=0) * anp.roll(free, -1, axis=0)
            + anp.roll(f, 1, axis=1) * anp.roll(free, 1, axis=1)
            + anp.roll(f, -1, axis=1) * anp.roll(free, -1, axis=1)
        )
        return f * free + solid * around / (_shift_sum(anp, free) + 0.001)

    def project(vx: Any, vy: Any, solid: Any) -> tuple[Any, Any]:
        div = -0.5 * (
            anp.roll(vx, -1, axis=1)
            - anp.roll(vx, 1, axis=1)
            + anp.roll(vy, -1, axis=0)
            - anp.roll(vy, 1, axis=0)
        )
        div = fill(div, solid)
        p = anp.zeros(vx.shape)
        for _ in range(4):
            p = fill((div + _shift_sum(anp, p)) / 4.0, solid)
        vx = vx - 0.5 * (anp.roll(p, -1, axis=1) - anp.roll(p, 1, axis=1))
        vy = vy - 0.5 * (anp.roll(p, -1, axis=0) - anp.roll(p, 1, axis=0))
        return vx * (1 - solid), vy * (1 - solid)

    def lift_over_drag(occupancy: Any) -> Any:
        solid = 0.5 * (anp.tanh(anp.reshape(occupancy, (rows, cols))) + 1.0) * box
        vx, vy = project(anp.ones((rows, cols)), anp.zeros((rows, cols)), solid)
        for _ in range(2):
            vx, vy = project(_advect(anp, vx, vx, vy), _advect(anp, vy, vx, vy), solid)
        return -anp.mean(vy) / anp.mean(1.0 - vx)

    value, grad = lib.value_and_grad(lift_over_drag)(start.ravel())
    return _as_arrays(value=value, grad=grad)


def custom_vjp_logsumexp(lib: Any) -> dict[str, np.ndarray]:
    """A logsumexp primitive with its own VJP (autograd's ``make_vjp(ans, x)`` form, built
    from differentiable operations), inside a larger function: its gradient, a second
    derivative through the rule, and per-row gradients by vmap."""
    anp = lib.numpy

    def lse(x: Any) -> Any:
        top = anp.max(x)
        return top + anp.log(anp.sum(anp.exp(x - top)))

    def lse_vjp(ans: Any, x: Any) -> Callable[[Any], Any]:
        return lambda g: anp.full(x.shape, g) * anp.exp(x - anp.full(x.shape, ans))

    lse_p = lib.primitive_with_vjp(lse, lse_vjp)

    def f(y: Any) -> Any:
        return anp.sum(lse_p(y**2)) * anp.sum(anp.sin(y))

    ys = np.random.RandomState(0).randn(3, 5)
    u = np.linspace(-1.0, 1.0, 5)
    return _as_arrays(
        grad=lib.grad(f)(ys[0]),
        hvp=lib.grad(lambda y: anp.sum(lib.grad(f)(y) * u))(ys[0]),
        rows=lib.vmap(lib.grad(f))(ys),
    )


def fixed_point_sqrt(lib: Any) -> dict[str, np.ndarray]:
    """sqrt(a) as the fixed point of Heron's map ``x -> (x + a / x) / 2``, iterated to a
    tolerance in Python, with a custom VJP from the implicit function theorem (partial
    derivatives of the map at the fixed point by grad, so the rule differentiates again)."""
    anp = lib.numpy

    def step(a: Any, x: Any) -> Any:
        return 0.5 * (x + a / x)

    def solve(a: Any) -> Any:
        x, prev = step(a, 10.0), 10.0
        while anp.abs(x - prev) > 1e-13:
            x, prev = step(a, x), x
        return x

    def implicit_vjp(ans: Any, a: Any) -> Callable[[Any], Any]:
        d_x = lib.grad(step, 1)(a, ans)
        d_a = lib.grad(step, 0)(a, ans)
        return lambda g: g * d_a / (1.0 - d_x)

    root = lib.primitive_with_vjp(solve, implicit_vjp)
    return _as_arrays(
        value=root(2.0),
        grad=lib.grad(root)(2.0),
        grad2=lib.grad(lib.grad(root))(2.0),
        grad_of_product=lib.grad(lambda a: root(a) * anp.sin(a))(3.0),
    )


def neural_ode(lib: Any) -> dict[str, np.ndarray]:
    """A neural ODE integrated by fixed-step RK4 in Python: data from cubic dynamics, an
    L1 trajectory loss, Adam on the ReLU net's parameters, and the gradients for a
    batch of initial states (vmap over them, jitted)."""
    anp = lib.numpy
    ts = np.linspace(0.0, 1.0, 5)

    def rk4(f: Callable[..., Any], y: Any, *args: Any) -> Any:
        ys = [y]
        for t0, t1 in zip(ts[:-1], ts[1:]):
            h = t1 - t0
            k1 = f(y, t0, *args)
            k2 = f(y + h / 2 * k1, t0 + h / 2, *args)
            k3 = f(y + h / 2 * k2, t0 + h / 2, *args)
            k4 = f(y + h * k3, t1, *args)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            ys.append(y)
        return anp.stack(ys)

    def cubic(y: Any, t: Any, a: Any) -> Any:
        return anp.dot(y**3, a)

    def net(y: Any, t: Any, params: Any) -> Any:
        (w1, b1), (w2, b2) = params
        return anp.dot(anp.maximum(0, anp.dot(y, w1) + b1), w2) + b2

    y0 = np.array([2.0, 0.0])
    truth = rk4(cubic, y0, np.array([[-0.1, 2.0], [-2.0, -0.1]]))
    params = _dense_params(np.random.RandomState(0), [2, 12, 2], 0.1)

    def loss(params: Any, y0: Any) -> Any:
        return anp.mean(anp.abs(rk4(net, y0, params) - truth))

    losses = []
    trained = _adam(
        lib,
        lambda p, i: lib.grad(loss)(p, y0),
        params,
        3,
        0.01,
        lambda p, i: losses.append(loss(p, y0)),
    )
    starts = np.random.RandomState(1).randn(3, 2)
    per_start = lib.jit(lib.vmap(lib.grad(loss), in_axes=(None, 0)))(trained, starts)
    return _as_arrays(
        truth=truth,
        losses=losses,
        w1=trained[0][0],
        per_start_w1=per_start[0][0],
        per_start_b2=per_start[1][1],
    )


PROGRAMS = {
    f.__name__: f
    for f in (
        logistic_regression,
        taylor_sine,
        tanh_derivatives,
        rosenbrock_cg,
        negative_binomial_newton,
        mlp_classifier,
        mlp_regression,
        black_box_svi,
        bayesian_neural_net,
        natural_gradient_svi,
        mixture_svi,
        gaussian_process,
        deep_gaussian_process,
        gplvm,
        bayesian_optimization,
        gaussian_mixture_newton,
        hmm_em,
        ica_student_t,
        char_rnn,
        char_lstm,
        convnet,
        variational_autoencoder,
        gan_minimax,
        smoke_advection,
        wing_occlusion,
        custom_vjp_logsumexp,
        fixed_point_sqrt,
        neural_ode,
    )
}

JITTED = ("logistic_regression", "char_rnn", "convnet", "neural_ode")
"""The programs that call ``lib.jit``: the test runs them eagerly (``jit`` the identity,
as autograd has none) and with functrace's ``jit``."""
