"""Functions calling ``blend_ops.smooth_max``, an operation whose only rules are in a template file
outside the engine (tests/corpora/outside_templates/blend_rules.py), for test_engine_tables.py."""
import numpy as np
from blend_ops import smooth_max


def soft_peak(x, y):
    """Scalars: a smooth maximum of two products."""
    return smooth_max(x * y, x - 2.0 * y) ** 2


def soft_relu_loss(w, x):
    """Arrays, broadcast against a number (elementwise=True: the rule's adjoint is reduced to 0.0's shape)."""
    hidden = smooth_max(x @ w, 0.0)
    return np.sum(hidden * hidden) / len(hidden)


def running_soft_max(x, n):
    """In a loop, on numbers (cheap=True: recomputed in the reverse sweep rather than recorded)."""
    best = x
    for i in range(n):
        best = smooth_max(best, x * np.cos(i + 1.0))
    return best * x
