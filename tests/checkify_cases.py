"""``jax.experimental.checkify`` cases, run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64`` and
``jax.experimental.checkify`` imported) when ``tests/fixtures/checkify_jax.npz`` was
recorded, ``functrace`` in tests/test_checkify.py. Each case stores the message
``err.get()`` gives (``"None"`` when there is no error; 0-d unicode arrays) and the
outputs: user checks with formatted values, eagerly and under ``jit`` (both orders),
batched errors under ``vmap``, the first error in program order, the automatic NaN,
division and index checks, checks inside ``cond``, ``switch``, ``fori_loop``,
``while_loop`` and ``scan``, ``grad`` under ``checkify``, ``check_error`` and error sets.
Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _msg(err: Any) -> np.ndarray:
    m = err.get()
    return np.array("None" if m is None else m)


def _raised(fn: Any, *args: Any) -> np.ndarray:
    try:
        fn(*args)
    except Exception as e:  # the library's own runtime error class
        return np.array(str(e))
    return np.array("no exception")


def cases(lib: Any) -> dict[str, np.ndarray]:
    ck, fnp, lax = lib.experimental.checkify, lib.numpy, lib.lax
    out: dict[str, np.ndarray] = {}

    def put(name: str, err: Any, val: Any = None) -> None:
        out[f"{name}/msg"] = _msg(err)
        if isinstance(val, (tuple, list)):
            for k, v in enumerate(val):
                out[f"{name}/out{k}"] = np.asarray(v)
        elif val is not None:
            out[f"{name}/out"] = np.asarray(val)

    def pos(x: Any) -> Any:
        ck.check(x > 0, "x must be positive, got {} (twice: {y})", x, y=2 * x)
        return fnp.log(x)

    for tag, v in (("fails", -3.0), ("passes", 2.5)):
        x = fnp.asarray(v)
        put(f"user/{tag}/eager", *ck.checkify(pos)(x))
        put(f"user/{tag}/jit_of_checkify", *lib.jit(ck.checkify(pos))(x))
        put(f"user/{tag}/checkify_of_jit", *ck.checkify(lib.jit(pos))(x))
    x32 = fnp.asarray(np.float32(-1.5))
    put("user/float32", *ck.checkify(pos)(x32))

    def arr(x: Any) -> Any:
        ck.check(fnp.all(x < 3), "too large: {} (sum {s})", x, s=x.sum())
        return x * 2

    put("user/array_payload", *ck.checkify(arr)(fnp.asarray([1.0, 4.0])))
    out["user/eager_raise"] = _raised(pos, fnp.asarray(-1.0))
    out["user/vmap_raise"] = _raised(lib.vmap(pos), fnp.asarray([1.0, -2.0, -3.0, 4.0]))

    xs = fnp.asarray([1.0, -2.0, 3.0, -4.0])
    put("vmap/batched", *lib.vmap(ck.checkify(pos))(xs))
    put("vmap/jit", *lib.jit(lib.vmap(ck.checkify(pos)))(xs))
    put("vmap/none", *lib.vmap(ck.checkify(pos))(fnp.abs(xs)))
    put("vmap/nested", *lib.vmap(lib.vmap(ck.checkify(pos)))(xs.reshape(2, 2)))
    put("vmap/checkify_of_vmap", *ck.checkify(lib.vmap(pos))(xs))

    def two(x: Any) -> Any:
        ck.check(x > 0, "first check")
        ck.check(x > 1, "second check")
        return x

    put("order/two_checks_first", *ck.checkify(two)(fnp.asarray(-1.0)))
    put("order/two_checks_second", *ck.checkify(two)(fnp.asarray(0.5)))

    def nan_then_check(x: Any) -> Any:
        y = fnp.sin(x)
        ck.check(x < 0, "x must be negative")
        return y

    def check_then_nan(x: Any) -> Any:
        ck.check(x < 0, "x must be negative")
        return fnp.sin(x)

    both = ck.user_checks | ck.nan_checks
    put("order/nan_then_check", *ck.checkify(nan_then_check, errors=both)(fnp.asarray(np.inf)))
    put("order/check_then_nan", *ck.checkify(check_then_nan, errors=both)(fnp.asarray(np.inf)))
    put("order/check_dropped", *ck.checkify(check_then_nan, errors=ck.nan_checks)(fnp.asarray(1.0)))

    nan = ck.nan_checks
    put("nan/sin", *ck.checkify(fnp.sin, errors=nan)(fnp.asarray(np.inf)))
    put("nan/log", *ck.checkify(fnp.log, errors=nan)(fnp.asarray([1.0, -1.0])))
    put("nan/sqrt", *ck.checkify(fnp.sqrt, errors=nan)(fnp.asarray(-2.0)))
    put("nan/add_nan_input", *ck.checkify(lambda x: x + 1.0, errors=nan)(fnp.asarray(np.nan)))
    put("nan/none", *ck.checkify(fnp.sin, errors=nan)(fnp.asarray(1.0)))
    put("nan/jit", *lib.jit(ck.checkify(lambda x: fnp.log(x) * 2.0, errors=nan))(-1.0))

    div = ck.div_checks
    one, zero = fnp.asarray(1.0), fnp.asarray(0.0)
    put("div/float", *ck.checkify(lambda a, b: a / b, errors=div)(one, zero))
    ione, izero, itwo = fnp.asarray(7), fnp.asarray(0), fnp.asarray(2)
    # (only the message: functrace's integer division by zero gives NumPy's 0, XLA's -1)
    put("div/int_floor", ck.checkify(lambda a, b: a // b, errors=div)(ione, izero)[0])
    put("div/int_ok", *ck.checkify(lambda a, b: a // b, errors=div)(ione, itwo))
    put("div/float_checks", *ck.checkify(lambda a, b: a / b, errors=ck.float_checks)(zero, zero))

    idx = ck.index_checks
    v3 = fnp.arange(3.0)
    get = ck.checkify(lambda x, i: x[i], errors=idx)
    put("index/scalar_high", *get(v3, 5))
    put("index/scalar_negative", *get(v3, -4))
    put("index/scalar_ok", *get(v3, -1))
    put("index/array", *get(v3, fnp.asarray([0, 7, 9])))
    put("index/jit", *lib.jit(get)(v3, 3))
    put(
        "index/take", *ck.checkify(lambda x, i: fnp.take(x, i), errors=idx)(v3, fnp.asarray([2, 4]))
    )
    put("index/at_set", *ck.checkify(lambda x, i: x.at[i].set(1.0), errors=idx)(v3, 4))
    put("index/two_axes", *ck.checkify(lambda x, i: x[i, 1], errors=idx)(fnp.ones((3, 4)), 4))
    ds = ck.checkify(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), errors=idx)
    put("index/dynamic_slice", *ds(v3, 2))
    dus = ck.checkify(lambda x, i: lax.dynamic_update_slice(x, fnp.ones(2), (i,)), errors=idx)
    put("index/dynamic_update_slice", *dus(v3, 2))

    def fori(x: Any, n: Any) -> Any:
        def body(i: Any, c: Any) -> Any:
            ck.check(c < 5, "c too big at step {}: {}", i, c)
            return c + x

        return lax.fori_loop(0, n, body, fnp.asarray(0.0))

    put("loops/fori_static", *ck.checkify(lambda x: fori(x, 10))(1.0))
    put("loops/fori_static_jit", *lib.jit(ck.checkify(lambda x: fori(x, 10)))(1.5))
    put("loops/fori_dynamic", *ck.checkify(fori)(1.0, 10))
    put("loops/fori_dynamic_jit", *lib.jit(ck.checkify(fori))(2.0, 10))
    put("loops/fori_ok", *ck.checkify(fori)(0.25, 10))

    def wl(x: Any) -> Any:
        def cond(c: Any) -> Any:
            ck.check(c[1] < 100.0, "cond saw {}", c[1])
            return c[0] < 6

        def body(c: Any) -> Any:
            ck.check(c[1] < 8.0, "body saw {} at {}", c[1], c[0])
            return c[0] + 1, c[1] * x

        return lax.while_loop(cond, body, (0, fnp.asarray(1.0)))

    put("loops/while_body", *ck.checkify(wl)(3.0))
    put("loops/while_body_jit", *lib.jit(ck.checkify(wl))(3.0))
    put("loops/while_ok", *ck.checkify(wl)(1.2))
    put("loops/while_cond_first", *ck.checkify(lambda x: wl(x))(200.0))

    def branches(x: Any) -> Any:
        def neg(x: Any) -> Any:
            ck.check(x > -1, "negative branch got {}", x)
            return -x

        def small(x: Any) -> Any:
            ck.check(x < 10, "small branch got {}", x)
            return x * 2

        return lax.cond(x < 0, neg, small, x)

    for v in (-2.0, 20.0, 3.0):
        put(f"cond/{v}", *ck.checkify(branches)(v))
        put(f"cond/{v}/jit", *lib.jit(ck.checkify(branches))(v))
    put("cond/vmap", *lib.vmap(ck.checkify(branches))(fnp.asarray([-2.0, 3.0, 20.0, -0.5])))

    def sw(i: Any, x: Any) -> Any:
        def mk(k: int) -> Any:
            def b(x: Any) -> Any:
                ck.check(x < k, "branch {k} got {x}", k=fnp.asarray(k), x=x)
                return x + k

            return b

        return lax.switch(i, [mk(0), mk(1), mk(2)], x)

    put("switch/1", *ck.checkify(sw)(1, 1.5))
    put("switch/2_jit", *lib.jit(ck.checkify(sw))(2, 1.5))

    def sc(xs: Any) -> Any:
        def body(c: Any, x: Any) -> Any:
            ck.check(x < 2, "element {} too large, carry {}", x, c)
            return c + x, c * x

        return lax.scan(body, fnp.asarray(0.0), xs)

    put("scan/fails", *ck.checkify(sc)(fnp.arange(5.0)))
    put("scan/jit", *lib.jit(ck.checkify(sc))(fnp.arange(5.0) - 1.0))
    put("scan/ok", *ck.checkify(sc)(fnp.arange(2.0)))
    put("scan/vmap", *lib.vmap(ck.checkify(sc))(fnp.arange(6.0).reshape(2, 3)))

    def loss(x: Any) -> Any:
        ck.check(x > 0, "loss needs x > 0, got {}", x)
        return fnp.log(x) * x

    put("grad/fails", *ck.checkify(lib.grad(loss))(fnp.asarray(-1.0)))
    put("grad/passes", *ck.checkify(lib.grad(loss))(fnp.asarray(2.0)))
    put("grad/jit", *lib.jit(ck.checkify(lib.grad(loss)))(fnp.asarray(-0.5)))

    def outer(x: Any) -> Any:
        err, y = lib.jit(ck.checkify(pos))(x)
        ck.check_error(err)
        return y

    put("check_error/fails", *ck.checkify(outer)(fnp.asarray(-2.0)))
    put("check_error/passes", *ck.checkify(outer)(fnp.asarray(2.0)))
    out["check_error/eager_raise"] = _raised(outer, fnp.asarray(-2.0))

    def dbg(x: Any) -> Any:
        ck.debug_check(x > 0, "debug check {}", x)
        return x

    put("debug_check/checkified", *ck.checkify(dbg)(fnp.asarray(-1.0)))
    out["debug_check/eager"] = np.asarray(dbg(fnp.asarray(-1.0)))

    def mixed(x: Any, i: Any) -> Any:
        y = x[i]
        ck.check(y > 0, "y {}", y)
        return fnp.log(y - 1.0) / (y - 2.0)

    for tag, i in (("oob", 7), ("user", 0), ("nan", 1), ("ok", 2)):
        put(f"all_checks/{tag}", *ck.checkify(mixed, errors=ck.all_checks)(fnp.arange(4.0), i))
    put("all_checks/minus", *ck.checkify(mixed, errors=ck.all_checks - ck.index_checks)(
        fnp.arange(4.0), 7))  # fmt: skip
    return out
