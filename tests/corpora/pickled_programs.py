"""Functions whose derivatives the pickling tests send to other processes (importable by name there)."""
import numpy as np

import s2s_ad


def energy(x, k=2.0):
    """A spring chain's energy: the sum of k/2 (x[i+1] - x[i] - 1)^2."""
    stretch = np.diff(x) - 1.0
    return 0.5 * k * np.sum(stretch ** 2)


def energy_gradient(x, k=2.0):
    """The closed form of ``energy``'s gradient by ``x``."""
    stretch = np.diff(x) - 1.0
    g = np.zeros_like(x)
    g[1:] += k * stretch
    g[:-1] -= k * stretch
    return g


@s2s_ad.grad
def decorated_energy(x):
    """``energy`` with its gradient taken by the decorator: the module's name is the gradient."""
    total = 0.0
    for i in range(len(x) - 1):
        total = total + (x[i + 1] - x[i] - 1.0) ** 2
    return total


def squares(x):
    """A vector-valued function for vjp: x**2 and its sum."""
    return x ** 2, np.sum(x)


def noisy(x):
    """A function whose forward sweep draws random numbers."""
    return np.sum(x * np.random.normal(size=x.shape))


class Spring:
    """A model whose method is differentiated (pickled as the bound method)."""

    def __init__(self, k):
        self.k = k

    def energy(self, x):
        return 0.5 * self.k * np.sum((np.diff(x) - 1.0) ** 2)


def gradient_in_child(gradient, x):
    """What a worker process runs: call the gradient it was handed."""
    return gradient(x)
