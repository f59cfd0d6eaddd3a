"""Functions for test_speed_users_notice.py (issue 22, "speed users notice")."""
import numpy as np
try:
    import scipy.stats
except ImportError:  # tests/driver/test_speed_users_notice.py leaves that case out, saying so
    scipy = None


def small(x):
    return np.sin(x) * x[0]


def noisy(x):
    noise = np.random.normal(size=3)
    return x * noise


def noisy_through_scipy(x):
    noise = scipy.stats.norm.rvs(size=3)  # no rule: it runs, and draws from NumPy's global generator
    return x * noise


def step(density, rate):
    spread = np.roll(density, 1) - 2.0 * density + np.roll(density, -1)
    return density + 0.01 * (0.5 * spread + rate * density * (1.0 - density))
