"""Minimize the Rosenbrock function in 20 dimensions with SciPy's second-order methods:
trust-exact with the Hessian (cotangent.hessian) and Newton-CG with Hessian-vector products
(cotangent.hvp, forward over reverse, which never forms the Hessian).
"""

import os
import time

import numpy as np
import scipy.optimize

import cotangent

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    n = 20
    m = cotangent.load(os.path.join(HERE, "rosenbrock_newton.cot"))
    f = m.rosenbrock
    grad = cotangent.grad(f, "x")
    hess = cotangent.hessian(f, "x")
    hvp = cotangent.hvp(f, "x")  # called as hvp(x, v) -> (gradient, Hessian times v)
    print("model:", f.signature)

    x0 = np.linspace(-0.5, 1.5, n)
    start = time.perf_counter()
    f(x0), grad(x0), hess(x0), hvp(x0, x0)  # the first calls compile them to native code
    compiled = time.perf_counter() - start

    # The Hessian against NumPy's formula at x0, and hvp against the Hessian.
    H = hess(x0)
    H_np = np.zeros((n, n))
    for i in range(n - 1):
        a, b = x0[i], x0[i + 1]
        H_np[i, i] += 1200.0 * a * a - 400.0 * b + 2.0
        H_np[i, i + 1] += -400.0 * a
        H_np[i + 1, i] += -400.0 * a
        H_np[i + 1, i + 1] += 200.0
    v = np.linspace(-1.0, 1.0, n)
    assert np.allclose(H, H_np, rtol=1e-12, atol=1e-9), np.max(np.abs(H - H_np))
    assert np.allclose(hvp(x0, v)[1], H_np @ v, rtol=1e-12, atol=1e-9)

    results = {}
    for method, kwargs in [
        ("trust-exact", {"hess": hess}),
        ("Newton-CG", {"hessp": lambda x, p: hvp(x, p)[1], "options": {"xtol": 1e-12}}),
        ("L-BFGS-B", {"options": {"maxiter": 10000, "gtol": 1e-9}}),
    ]:
        start = time.perf_counter()
        res = scipy.optimize.minimize(f, x0, jac=grad, method=method, **kwargs)
        elapsed = time.perf_counter() - start
        error = float(np.max(np.abs(res.x - 1.0)))
        gnorm = float(np.linalg.norm(grad(res.x)))
        results[method] = res
        print(f"{method:>11}: {res.nit:4d} iterations, {elapsed:.3f} s, f = {res.fun:.2e}, "
              f"|x - 1| = {error:.1e}, |grad| = {gnorm:.1e}")
        assert res.success, (method, res.message)
        assert error < 1e-4, (method, error)
    print(f"(compiling took {compiled:.3f} s)")
    # The second-order methods need far fewer iterations than the first-order one.
    assert results["trust-exact"].nit < results["L-BFGS-B"].nit
    print("rosenbrock_newton: OK")


if __name__ == "__main__":
    main()
