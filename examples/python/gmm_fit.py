"""Fit a Gaussian mixture to samples of a known mixture by maximizing the log-posterior of
examples/gradbench/gmm.cot (GradBench's gmm, loaded as it is) with SciPy's L-BFGS-B.

gmm.cot's `objective(alpha, mu, q, l, x, m, gamma)` is the log-posterior of the mixture with
weights softmax(alpha), means mu and precisions Q_j^T Q_j (Q_j lower triangular, exp(q[j]) on
its diagonal, l[j] below it), under a Wishart prior with parameters gamma and m. L-BFGS-B
minimizes, so the script minimizes its negative (scipy_objective's maximize=True).
"""

import itertools
import os
import time

import numpy as np
import scipy.optimize

import cotangent

HERE = os.path.dirname(os.path.abspath(__file__))
GMM = os.path.join(HERE, "..", "gradbench", "gmm.cot")


def main():
    rng = np.random.default_rng(1)
    d, K, n = 2, 3, 500
    weights_true = np.array([0.5, 0.3, 0.2])
    means_true = np.array([[-4.0, 0.0], [4.0, 1.0], [0.0, 6.0]])
    covs_true = np.array([[[1.0, 0.3], [0.3, 0.5]],
                          [[0.6, -0.2], [-0.2, 1.2]],
                          [[0.8, 0.0], [0.0, 0.8]]])
    component = rng.choice(K, size=n, p=weights_true)
    x = np.stack([rng.multivariate_normal(means_true[c], covs_true[c]) for c in component])

    m = cotangent.load(GMM)
    objective = m.objective
    print("model:", objective.signature)

    # The starting mixture: equal weights, unit precisions, means at K random points.
    alpha0 = np.zeros(K)
    mu0 = x[rng.choice(n, size=K, replace=False)]
    q0 = np.zeros((K, d))
    l0 = np.zeros((K, d * (d - 1) // 2))
    wishart_m, wishart_gamma = 0, 1.0

    # L-BFGS-B minimizes: maximize=True gives it the negative log-posterior and its gradient.
    negative, p0, unravel = cotangent.scipy_objective(
        objective, alpha0, mu0, q0, l0, x, wishart_m, wishart_gamma, wrt=("alpha", "mu", "q", "l"),
        maximize=True)

    start = time.perf_counter()
    start_value = -negative(p0)[0]  # the first call compiles value_and_grad to native code
    compiled = time.perf_counter() - start
    start = time.perf_counter()
    res = scipy.optimize.minimize(negative, p0, jac=True, method="L-BFGS-B",
                                  options={"maxiter": 1000})
    elapsed = time.perf_counter() - start
    alpha, mu, q, l = unravel(res.x)
    final_value = -res.fun
    print(f"L-BFGS-B: {res.nit} iterations, {res.nfev} evaluations, {elapsed:.3f} s "
          f"(compiling took {compiled:.3f} s)")
    print(f"log-posterior: {start_value:.2f} -> {final_value:.2f}")

    # Match the fitted components to the true ones (the labels are arbitrary).
    perm = min(itertools.permutations(range(K)),
               key=lambda p: np.sum((mu[list(p)] - means_true) ** 2))
    perm = list(perm)
    weights = np.exp(alpha - np.max(alpha))
    weights /= weights.sum()
    mean_error = float(np.max(np.linalg.norm(mu[perm] - means_true, axis=1)))
    weight_error = float(np.max(np.abs(weights[perm] - weights_true)))
    print("true means:  ", means_true.tolist())
    print("fitted means:", np.round(mu[perm], 3).tolist())
    print("true weights:  ", weights_true.tolist())
    print("fitted weights:", np.round(weights[perm], 3).tolist())
    # The covariance of component j is (Q_j^T Q_j)^-1; l[j] holds Q_j's strictly lower
    # triangle column by column. The fit should match the covariance of the samples that came
    # from the component (which, with ~100 samples, can differ from the true one by 0.3).
    cov_error = 0.0
    for j, t in enumerate(perm):
        Q = np.diag(np.exp(q[t]))
        rows, cols = np.triu_indices(d, 1)  # (c, r) pairs, c < r, ordered by c then r
        Q[cols, rows] = l[t]
        cov = np.linalg.inv(Q.T @ Q)
        sample = np.cov(x[component == j].T, bias=True)
        cov_error = max(cov_error, float(np.max(np.abs(cov - sample))))
        print(f"component {j}: covariance {np.round(cov, 2).tolist()}, "
              f"of its samples {np.round(sample, 2).tolist()}, true {covs_true[j].tolist()}")
    print(f"largest errors: mean {mean_error:.3f}, weight {weight_error:.3f}, "
          f"covariance (against the samples') {cov_error:.3f}")

    assert res.success, res.message
    assert final_value - start_value > 1000.0, (start_value, final_value)
    assert mean_error < 0.3, mean_error
    assert weight_error < 0.06, weight_error
    assert cov_error < 0.1, cov_error
    print("gmm_fit: OK")


if __name__ == "__main__":
    main()
