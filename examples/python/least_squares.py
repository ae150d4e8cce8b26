"""Fit y = a exp(-b t) + c to noisy measurements with scipy.optimize.least_squares, the
residuals and their Jacobian compiled by Cotangent.

`residuals(p, t, y)` is the vector f(p, t) - y; cotangent.jacobian(residuals, "p") is its
Jacobian with respect to p, of shape (n, 3). Both take the data as extra arguments, which
least_squares passes through `args`.
"""

import os
import time

import numpy as np
import scipy.optimize

import cotangent

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(2)
    p_true = np.array([5.0, 0.8, 1.5])  # a, b, c
    n = 200
    t = np.linspace(0.0, 8.0, n)
    a, b, c = p_true
    y = a * np.exp(-b * t) + c + 0.05 * rng.normal(size=n)

    m = cotangent.load(os.path.join(HERE, "least_squares.cot"))
    residuals = m.residuals
    jac = cotangent.jacobian(residuals, "p")
    print("model:", residuals.signature)
    print("Jacobian:", jac.signature)

    p0 = np.array([1.0, 1.0, 0.0])
    start = time.perf_counter()
    residuals(p0, t, y), jac(p0, t, y)  # the first calls compile them to native code
    compiled = time.perf_counter() - start

    # The Jacobian against central differences at the starting point.
    h = 1e-6
    numeric = np.stack([(residuals(p0 + h * e, t, y) - residuals(p0 - h * e, t, y)) / (2 * h)
                        for e in np.eye(3)], axis=1)
    jac_error = float(np.max(np.abs(jac(p0, t, y) - numeric)))
    print(f"Jacobian at p0 vs central differences: largest difference {jac_error:.1e}")

    start = time.perf_counter()
    res = scipy.optimize.least_squares(residuals, p0, jac=jac, args=(t, y), method="lm")
    elapsed = time.perf_counter() - start
    print(f"least_squares (Levenberg-Marquardt): {res.nfev} residual evaluations, "
          f"{res.njev} Jacobians, {elapsed:.3f} s (compiling took {compiled:.3f} s)")

    # Standard errors from the Jacobian at the solution: cov = s^2 (J^T J)^-1.
    J = res.jac
    dof = n - len(p_true)
    s2 = 2.0 * res.cost / dof
    stderr = np.sqrt(np.diag(s2 * np.linalg.inv(J.T @ J)))
    print("true parameters (a, b, c):  ", p_true.tolist())
    print("fitted parameters (a, b, c):", np.round(res.x, 4).tolist())
    print("standard errors:            ", np.round(stderr, 4).tolist())
    print(f"residual standard deviation: {np.sqrt(s2):.4f} (the noise's: 0.05)")

    z = np.abs(res.x - p_true) / stderr
    assert res.success, res.message
    assert jac_error < 1e-6, jac_error
    assert np.all(z < 4.0), z
    assert np.allclose(res.x, p_true, rtol=0.05), res.x
    print("least_squares: OK")


if __name__ == "__main__":
    main()
