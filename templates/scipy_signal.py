"""Rules for ``scipy.signal.convolve`` and ``scipy.signal.correlate`` (real N-d arrays, every mode),
registered once the user imports ``scipy.signal`` (SciPy is an optional extra).

``convolve(a, v)`` in mode ``"full"`` is ``out[k] = sum_i a[i] v[k - i]`` over every axis; ``"same"``
and ``"valid"`` are windows of it.  Each input's adjoint is the full adjoint (the window's adjoint
placed in zeros: ``convolution_window``) correlated with the other input, in mode ``"valid"``:
``d_a[i] = sum_k g[k] v[k - i]``.  ``correlate(a, v)`` is ``convolve(a, flip(v))`` in every mode
(flipped along every axis), and its rule is that one's.  Both are bilinear, so forward mode takes
``f(t_a, v) + f(a, t_v)``; the adjoints call ``correlate`` and ``convolve`` again, so Hessians work.
``method`` (``"auto"``, ``"direct"``, ``"fft"``) is passed along and carries no derivative.
"""
import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable, when_imported

signal = None  # scipy.signal, once imported (see _register)


def convolution_margins(a, v, mode, shape):
    """For each axis, the zeros before and after a window of ``shape`` (``mode``'s result of
    ``scipy.signal.convolve(a, v)``) in the full result: ``"same"`` is centred as SciPy centres it
    (the shape of ``a``), ``"valid"`` starts where the shorter input first lies inside the longer
    (SciPy swaps the inputs where ``v`` is the larger in every axis)."""
    margins = []
    for n, m, size in zip(np.shape(a), np.shape(v), shape):
        full = n + m - 1
        start = 0 if mode == "full" else (m - 1) // 2 if mode == "same" else min(n, m) - 1
        margins.append((start, full - start - size))
    return margins


nondifferentiable(convolution_margins)


def convolution_window(grad, a, v, mode):
    """The adjoint of ``mode``'s result placed in zeros shaped like the full result."""
    if mode == "full" or np.ndim(grad) == 0:
        return grad
    return np.pad(grad, convolution_margins(a, v, mode, np.shape(grad)))


_SIGNALS = ({"in1": (5,), "in2": (3,)}, {"in1": (3,), "in2": (5,)}, {"in1": (4,), "in2": (4,), "mode": "same"},
            {"in1": (5,), "in2": (2,), "mode": "same"}, {"in1": (2,), "in2": (5,), "mode": "same"},
            {"in1": (6,), "in2": (3,), "mode": "valid"}, {"in1": (3,), "in2": (6,), "mode": "valid"},
            {"in1": (3, 4), "in2": (2, 3)}, {"in1": (3, 4), "in2": (2, 3), "mode": "same"},
            {"in1": (2, 3), "in2": (3, 5), "mode": "same"}, {"in1": (4, 5), "in2": (2, 3), "mode": "valid"},
            {"in1": (2, 3), "in2": (4, 4), "mode": "valid"}, {"in1": (3, 2, 4), "in2": (2, 2, 3), "mode": "same"},
            {"in1": (3, 2, 4), "in2": (2, 2, 3), "mode": "valid", "method": "fft"},
            {"in1": (6,), "in2": (3,), "mode": "full", "method": "direct"})


def _register(module) -> None:
    """Declare the rules below, given ``scipy.signal``."""
    global signal
    signal = module  # the name the rules' bodies use

    @adjoint(signal.convolve, bilinear=True, factors=(0, 1), examples=_SIGNALS)
    def convolve(out, in1, in2, mode="full", method="auto", *, d_out):
        full = convolution_window(d_out, in1, in2, mode)
        d_in1 = signal.correlate(full, in2, "valid", method)
        d_in2 = signal.correlate(full, in1, "valid", method)

    @adjoint(signal.correlate, bilinear=True, factors=(0, 1), examples=_SIGNALS)
    def correlate(out, in1, in2, mode="full", method="auto", *, d_out):
        # convolve(in1, flip(in2)): its adjoint, with the second input's flipped back
        full = convolution_window(d_out, in1, in2, mode)
        d_in1 = signal.convolve(full, in2, "valid", method)
        d_in2 = np.flip(signal.correlate(full, in1, "valid", method))

    declare(signal.convolve, signal.correlate, numeric=True)


when_imported("scipy.signal", _register)
