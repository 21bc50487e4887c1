"""What a traced value's message says when code asks it for an attribute of a PyTorch
tensor (``x.detach()``, ``x.backward()``, ``x.cuda()``...): the functrace way to do it.
Read by ``core.Tracer.__getattr__``."""

_GRAD_HINT = (
    "functrace differentiates functions, not arrays. Write the loss as a function and call "
    "ft.grad(loss)(params) or ft.value_and_grad(loss)(params) (ft.vjp for non-scalar "
    "outputs); gradients are returned, not stored on the inputs."
)
_IMMUTABLE_HINT = (
    "functrace arrays are immutable: build a new value instead (x.at[idx].set(v), "
    "fnp.zeros_like(x), x + y)."
)
TORCH_HINTS = {
    "detach": "use ft.stop_gradient(x) to treat a value as a constant for differentiation.",
    "data": "use ft.stop_gradient(x) to treat a value as a constant for differentiation.",
    "requires_grad": _GRAD_HINT,
    "requires_grad_": _GRAD_HINT,
    "backward": _GRAD_HINT,
    "grad": _GRAD_HINT,
    "retain_grad": _GRAD_HINT,
    "register_hook": "use y = ft.grad_hook(x, fn) to see or replace the cotangent of x.",
    "numpy": (
        "a traced value has no NumPy value inside the transformed function; return it "
        "(results are NumPy arrays), or look at it with ft.debug.print / ft.debug.callback."
    ),
    "cpu": "there are no devices: functrace arrays are NumPy arrays in memory; drop the call.",
    "cuda": "there are no devices: functrace arrays are NumPy arrays in memory; drop the call.",
    "to": "there are no devices: functrace arrays are NumPy arrays in memory; use .astype().",
    "zero_": _IMMUTABLE_HINT,
    "fill_": _IMMUTABLE_HINT,
    "add_": _IMMUTABLE_HINT,
    "sub_": _IMMUTABLE_HINT,
    "mul_": _IMMUTABLE_HINT,
    "div_": _IMMUTABLE_HINT,
    "copy_": _IMMUTABLE_HINT,
    "clamp_": _IMMUTABLE_HINT,
    "clone": "arrays are immutable, so no copy is needed (x.copy() also works).",
    "dim": "use x.ndim.",
    "view": "use x.reshape(...).",
    "unsqueeze": "use fnp.expand_dims(x, axis).",
    "permute": "use x.transpose(...).",
    "float": "use x.astype(fnp.float32).",
    "double": "use x.astype(fnp.float64).",
    "long": "use x.astype(fnp.int64).",
}
