"""Fit a logistic regression with SciPy's L-BFGS-B, the loss and its gradient compiled by
Cotangent.

The data come from a known weight vector and bias; the fit should recover them (up to the
noise of 20000 samples), classify most points correctly, and stop where the gradient is ~0.
"""

import os
import time

import numpy as np
import scipy.optimize

import cotangent

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(0)
    n, d = 20000, 5
    w_true = np.array([1.5, -2.0, 0.5, 0.0, 3.0])
    b_true = -0.75
    X = rng.normal(size=(n, d))
    p_true = 1.0 / (1.0 + np.exp(-(X @ w_true + b_true)))
    y = (rng.uniform(size=n) < p_true).astype(np.float64)

    m = cotangent.load(os.path.join(HERE, "logistic_regression.cot"))
    print("model:", m.loss.signature)

    # Two parameters (w, a vector, and b, a scalar): scipy_objective packs them into the one
    # flat vector that SciPy optimizes, and returns value_and_grad(loss, w, b) over it.
    fun, x0, unravel = cotangent.scipy_objective(m.loss, np.zeros(d), 0.0, X, y, wrt=("w", "b"))
    start = time.perf_counter()
    fun(x0)  # the first call compiles value_and_grad(loss, w, b) to native code
    compiled = time.perf_counter() - start
    start = time.perf_counter()
    res = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B",
                                  options={"gtol": 1e-10, "ftol": 1e-14})
    elapsed = time.perf_counter() - start
    w, b = unravel(res.x)
    print(f"L-BFGS-B: {res.nit} iterations, {res.nfev} evaluations, {elapsed:.3f} s, "
          f"loss {fun(x0)[0]:.4f} -> {res.fun:.4f} (compiling took {compiled:.3f} s)")
    print("true weights:  ", np.round(w_true, 3), "bias", b_true)
    print("fitted weights:", np.round(w, 3), "bias", round(b, 3))

    # The gradient at the optimum, from the derived function grad(loss, w, b).
    gw, gb = cotangent.grad(m.loss, "w", "b")(w, b, X, y)
    # The same loss and gradient written in NumPy, as an independent check of the compiled ones.
    z = X @ w + b
    loss_np = np.mean(np.logaddexp(0.0, z) - y * z)
    r = 1.0 / (1.0 + np.exp(-z)) - y
    assert abs(m.loss(w, b, X, y) - loss_np) < 1e-12
    assert np.allclose(gw, X.T @ r / n, rtol=0, atol=1e-12) and abs(gb - np.mean(r)) < 1e-12
    gnorm = float(np.sqrt(np.sum(gw ** 2) + gb ** 2))
    accuracy = float(np.mean((m.predict(w, b, X) > 0.5) == (y == 1.0)))
    bayes = float(np.mean((p_true > 0.5) == (y == 1.0)))
    error = float(np.max(np.abs(np.append(w - w_true, b - b_true))))
    print(f"gradient norm at the optimum: {gnorm:.2e}")
    print(f"accuracy: {accuracy:.3f} (the true model's: {bayes:.3f})")
    print(f"largest parameter error: {error:.3f}")

    assert res.success, res.message
    assert gnorm < 1e-5, gnorm
    assert error < 0.2, error
    assert accuracy > bayes - 0.01, (accuracy, bayes)
    print("logistic_regression: OK")


if __name__ == "__main__":
    main()
