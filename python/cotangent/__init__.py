"""Cotangent from Python: load a module of the language, call its functions on NumPy arrays,
and differentiate them with the language's derivative operators as transforms.

    import cotangent, numpy as np
    m = cotangent.load("model.cot")
    loss = m.loss                         # a Function
    g = cotangent.grad(loss, "w")         # a Function too: grad(loss, w)
    g(w, X, y)                            # -> np.ndarray

docs/python.md is the tutorial and the reference.
"""

import inspect as _inspect
import os as _os

from . import _cotangent
from ._cotangent import Function, Module
from ._errors import CompileError, Diagnostic, Error, EvaluationError
from ._flat import ravel, scipy_objective
from ._transforms import grad, hessian, hvp, jacobian, jvp, value_and_grad, vjp

def _signature(f):
    """inspect.signature(f): the parameters with their types as written, and out=."""
    names = [name for name, _ in f.parameters]
    params = [_inspect.Parameter(name, _inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typ)
              for name, typ in f.parameters]
    if "out" not in names:
        params.append(_inspect.Parameter("out", _inspect.Parameter.KEYWORD_ONLY, default=None))
    return _inspect.Signature(params, return_annotation=f.result_type)


Function.__signature__ = property(_signature)

# GNU OpenMP's threads do not survive fork(): in a forked child (multiprocessing's default on
# Linux) native code runs on one thread instead of waiting forever for the parent's.
_os.register_at_fork(after_in_child=_cotangent._after_fork_in_child)

__all__ = [
    "CompileError", "Diagnostic", "Error", "EvaluationError", "Function", "Module", "cost",
    "grad", "hessian", "hvp", "jacobian", "jvp", "load", "loads", "ravel", "scipy_objective",
    "source", "value_and_grad", "vjp",
]


def load(path, *, backend="native", threads=0, opt=None, max_while_iterations=100_000_000,
         cache_dir=""):
    """Loads the module in the file `path` (a str or os.PathLike): a Module, or CompileError
    with every error of the module (or the file's, when it cannot be read). Options:
    docs/python.md, "Loading"."""
    path = _os.fspath(path)
    if isinstance(path, str) and "\n" in path and not _os.path.exists(path):
        raise TypeError("load takes the path of a file; to load source text, use cotangent.loads")
    return _cotangent.load(path, backend=backend, threads=threads, opt=opt,
                           max_while_iterations=max_while_iterations,
                           cache_dir=_os.fspath(cache_dir))


def loads(source, name="<string>", *, backend="native", threads=0, opt=None,
          max_while_iterations=100_000_000, cache_dir=""):
    """Loads a module from the text `source`, named `name` in messages: as load()."""
    return _cotangent.loads(source, name, backend=backend, threads=threads, opt=opt,
                            max_while_iterations=max_while_iterations,
                            cache_dir=_os.fspath(cache_dir))


def source(f):
    """The function `f` (or derived function) as source in the language, as `cotangent print`
    prints it: what the compiler runs, after the optimizer."""
    return f.source()


def cost(f, *args, **kwargs):
    """The operation counts of `f(*args, **kwargs)` under the cost model of docs/language.md
    §10, as a dict: ops (the total), add, mul, call. Runs the interpreter."""
    return f.cost(*args, **kwargs)
