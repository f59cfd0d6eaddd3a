"""Maximum likelihood with scipy.stats: a Student-t and a gamma distribution fitted to data by
Newton's method, with s2s_ad.grad and s2s_ad.hessian of the negative log-likelihood.

    nll(theta) = -sum(stats.t.logpdf(data, df, loc, scale))        theta = (loc, log scale, log df)
    nll(theta) = -sum(stats.gamma.logpdf(data, a, scale=scale))      theta = (log a, log scale)

The parameters are taken on the log scale where they must be positive, so that every step stays
inside the support. s2s_ad differentiates scipy.stats' own logpdf by the point's parameters (the
rules are in s2s_ad's templates/scipy_stats.py) and the Hessian by forward mode over the gradient.
Each Newton step solves hessian step = -gradient, shifted where the Hessian is not positive
definite, and is halved until the likelihood improves. The result is compared with SciPy's own
fit (scipy.stats.t.fit, scipy.stats.gamma.fit with the location fixed at 0).

Run: python examples/fit_distributions.py [--samples N]
"""
import argparse

import numpy as np
from scipy import stats

import s2s_ad


def student_t_nll(theta, data):
    loc, scale, df = theta[0], np.exp(theta[1]), np.exp(theta[2])
    return -np.sum(stats.t.logpdf(data, df, loc, scale))


def gamma_nll(theta, data):
    return -np.sum(stats.gamma.logpdf(data, np.exp(theta[0]), scale=np.exp(theta[1])))


def newton(nll, theta, data, tolerance=1e-9, max_iterations=50):
    """Newton's method on nll from theta; prints one line per iterate; returns the minimiser."""
    gradient, hessian = s2s_ad.grad(nll), s2s_ad.hessian(nll)
    print(f"  {'iter':>4} {'nll':>14} {'|gradient|':>11}   theta")
    for iteration in range(max_iterations):
        g = gradient(theta, data)
        print(f"  {iteration:>4} {nll(theta, data):14.6f} {np.linalg.norm(g):11.3e}   "
              + " ".join(f"{v:9.5f}" for v in theta))
        if np.linalg.norm(g) < tolerance * len(data):
            break
        h = hessian(theta, data)
        shift = 0.0
        while np.min(np.linalg.eigvalsh(h + shift * np.eye(len(g)))) <= 0.0:
            shift = max(2.0 * shift, 1e-3 * np.max(np.abs(h)))
        step = np.linalg.solve(h + shift * np.eye(len(g)), -g)
        length = 1.0
        while not nll(theta + length * step, data) <= nll(theta, data) + 1e-4 * length * (g @ step):
            length /= 2.0
        theta = theta + length * step
    return theta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    n = parser.parse_args().samples
    rng = np.random.default_rng(2026)

    data = stats.t.rvs(4.0, loc=2.0, scale=0.5, size=n, random_state=rng)
    start = np.array([np.median(data), np.log(np.subtract(*np.percentile(data, [75, 25])) / 1.35), np.log(10.0)])
    print(f"Student-t, {n} samples drawn with loc 2, scale 0.5, df 4:")
    theta = newton(student_t_nll, start, data)
    loc, scale, df = theta[0], np.exp(theta[1]), np.exp(theta[2])
    scipy_df, scipy_loc, scipy_scale = stats.t.fit(data)
    print(f"  fitted:     loc {loc:.6f}  scale {scale:.6f}  df {df:.6f}  nll {student_t_nll(theta, data):.6f}")
    print(f"  SciPy's fit: loc {scipy_loc:.6f}  scale {scipy_scale:.6f}  df {scipy_df:.6f}  "
          f"nll {student_t_nll(np.array([scipy_loc, np.log(scipy_scale), np.log(scipy_df)]), data):.6f}")

    data = stats.gamma.rvs(3.0, scale=1.5, size=n, random_state=rng)
    mean, var = np.mean(data), np.var(data)
    start = np.log(np.array([mean * mean / var, var / mean]))  # the method of moments
    print(f"gamma, {n} samples drawn with a 3, scale 1.5:")
    theta = newton(gamma_nll, start, data)
    a, scale = np.exp(theta)
    scipy_a, _, scipy_scale = stats.gamma.fit(data, floc=0.0)
    print(f"  fitted:     a {a:.6f}  scale {scale:.6f}  nll {gamma_nll(theta, data):.6f}")
    print(f"  SciPy's fit: a {scipy_a:.6f}  scale {scipy_scale:.6f}  "
          f"nll {gamma_nll(np.log(np.array([scipy_a, scipy_scale])), data):.6f}")


if __name__ == "__main__":
    main()
