"""Flat parameter vectors for SciPy's optimizers, which take one float64 vector where a model
has several parameters of several shapes."""

import numpy as np


def ravel(*values):
    """ravel(a, b, ...) -> (flat, unravel): the values (arrays or numbers) concatenated into one
    float64 vector, and a function that splits such a vector back into a tuple of arrays with
    the original shapes and real dtypes (an f32 array comes back f32; numbers and 0-d arrays
    come back as Python floats)."""
    given = [np.asarray(v) for v in values]
    dtypes = [a.dtype if a.dtype == np.float32 else np.float64 for a in given]
    arrays = [a.astype(np.float64) for a in given]
    shapes = [a.shape for a in arrays]
    sizes = [a.size for a in arrays]
    flat = np.concatenate([a.ravel() for a in arrays]) if arrays else np.zeros(0)

    def unravel(x):
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (sum(sizes),):
            raise ValueError(f"unravel takes a vector of {sum(sizes)} values; given shape {x.shape}")
        parts, start = [], 0
        for shape, size, dtype in zip(shapes, sizes, dtypes):
            part = x[start:start + size].reshape(shape).astype(dtype)
            parts.append(float(part) if shape == () else part)
            start += size
        return tuple(parts)

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
    from ._transforms import value_and_grad
    if isinstance(wrt, str):
        wrt = (wrt,)
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
