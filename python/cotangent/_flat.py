"""Flat parameter vectors for SciPy's optimizers, which take one float64 vector where a model
has several parameters of several shapes."""

import numpy as np


def ravel(*values):
    """ravel(a, b, ...) -> (flat, unravel): the values (arrays, numbers, and tuples of them, as
    tuple parameters take) concatenated into one float64 vector, and a function that splits
    such a vector back into a tuple of the same structure, shapes and real dtypes (an f32
    array comes back f32; numbers and 0-d arrays come back as Python floats)."""
    leaves = []  # (shape, dtype) per array, depth first

    def flatten(v):
        if isinstance(v, tuple):
            return tuple(flatten(e) for e in v)
        a = np.asarray(v)
        leaves.append((a.shape, a.dtype if a.dtype == np.float32 else np.dtype(np.float64),
                       a.astype(np.float64).ravel()))
        return None

    structure = tuple(flatten(v) for v in values)
    total = sum(part.size for _, _, part in leaves)
    flat = np.concatenate([part for _, _, part in leaves]) if leaves else np.zeros(0)

    def unravel(x):
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (total,):
            raise ValueError(f"unravel takes a vector of {total} values; given shape {x.shape}")
        it = iter(leaves)
        start = 0

        def build(node):
            nonlocal start
            if isinstance(node, tuple):
                return tuple(build(e) for e in node)
            shape, dtype, part = next(it)
            piece = x[start:start + part.size].reshape(shape).astype(dtype)
            start += part.size
            return float(piece) if shape == () else piece

        return build(structure)

    return flat, unravel


def scipy_objective(f, *args, wrt, maximize=False, **kwargs):
    """The objective of scipy.optimize.minimize(fun, x0, jac=True) for the scalar function f:

        fun, x0, unravel = cotangent.scipy_objective(m.loss, w0, b0, X, y, wrt=("w", "b"))
        res = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B")
        w, b = unravel(res.x)

    args and kwargs are f's arguments, the parameters named in `wrt` at their starting values;
    fun(x) evaluates value_and_grad(f, *wrt) with those parameters read from the flat vector x
    and returns (value, gradient as a flat vector). With maximize=True, fun returns their
    negatives, so that a minimizer maximizes f (a log-likelihood, say)."""
    from ._transforms import _names, value_and_grad
    if isinstance(wrt, (str, int)) or not hasattr(wrt, "__iter__"):
        wrt = (wrt,)
    wrt = _names(f, tuple(wrt))
    if not wrt:
        raise ValueError("scipy_objective needs the parameters to fit: wrt=(name, ...)")
    names = [p for p, _ in f.parameters]
    if len(args) > len(names):
        raise TypeError(f"{f.name}() takes {len(names)} arguments but {len(args)} were given")
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{f.name}() got an unexpected keyword argument '{k}'")
        if k in bound:
            raise TypeError(f"{f.name}() got multiple values for argument '{k}'")
        bound[k] = v
    missing = [n for n in names if n not in bound]
    if missing:
        raise TypeError(f"{f.name}() missing arguments: {', '.join(missing)}")
    for w in wrt:
        if w not in names:
            raise ValueError(f"{f.name} has no parameter named {w!r} (its parameters: {', '.join(names)})")
    vg = value_and_grad(f, *wrt)
    x0, unravel = ravel(*(bound[w] for w in wrt))

    def fun(x):
        call = dict(bound)
        call.update(zip(wrt, unravel(x)))
        value, g = vg(**call)
        grads = g if len(wrt) > 1 else (g,)
        flat = ravel(*grads)[0]
        return (-value, -flat) if maximize else (value, flat)

    return fun, x0, unravel
