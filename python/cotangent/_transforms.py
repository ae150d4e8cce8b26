"""The derivative operators of the language (docs/language.md §8) as transforms: each takes a
Function and the names (or positions) of its active parameters, none meaning every real
parameter, and returns a new Function, so they compose."""

import operator


def _names(f, wrt):
    if len(wrt) == 1 and isinstance(wrt[0], (list, tuple)):
        wrt = tuple(wrt[0])
    params = [p for p, _ in f.parameters]
    names = []
    for w in wrt:
        if not isinstance(w, str):
            if isinstance(w, bool):
                raise TypeError(f"active parameters are names or positions; given {w!r}")
            try:
                w = operator.index(w)  # int, numpy integers
            except TypeError:
                raise TypeError(f"active parameters are names or positions; given {w!r}") from None
            if not -len(params) <= w < len(params):
                raise ValueError(f"{f.name} has {len(params)} parameters; position {w} is out of range")
            w = params[w]
        names.append(w)
    return names


def _derive(kind, f, wrt):
    from ._cotangent import Function
    if not isinstance(f, Function):
        raise TypeError(f"{kind} takes a cotangent.Function (module.NAME); given {type(f).__name__}")
    return f._derivative(kind, _names(f, wrt))


def grad(f, *wrt):
    """grad(f, a, ...): the gradient of the scalar function f for each active parameter (a
    tuple when there are several)."""
    return _derive("grad", f, wrt)


def value_and_grad(f, *wrt):
    """value_and_grad(f, a, ...): (f's value, its gradient), in one pass."""
    return _derive("value_and_grad", f, wrt)


def jvp(f, *wrt):
    """jvp(f, a, ...): called with f's arguments and one tangent per active parameter, returns
    (f's value, the tangent of its result): forward mode."""
    return _derive("jvp", f, wrt)


def vjp(f, *wrt):
    """vjp(f, a, ...): called with f's arguments and a cotangent shaped like f's result,
    returns the cotangent of each active parameter: reverse mode."""
    return _derive("vjp", f, wrt)


def jacobian(f, *wrt):
    """jacobian(f, a): the Jacobian of f's result with respect to the tensor parameter a, of
    shape result.shape + a.shape."""
    return _derive("jacobian", f, wrt)


def hessian(f, *wrt):
    """hessian(f, a): jacobian(grad(f, a), a), of shape a.shape + a.shape."""
    return _derive("hessian", f, wrt)


def hvp(f, *wrt):
    """hvp(f, a, ...) is jvp(grad(f, a, ...), a, ...): called with f's arguments and a vector v
    per active parameter, returns (the gradient, the Hessian times v): forward over reverse,
    without forming the Hessian."""
    return jvp(grad(f, *wrt), *wrt)
