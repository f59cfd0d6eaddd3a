"""Rules for ``np.fft``'s shifts: permutations of the elements, so their adjoints are the inverse shifts."""
import numpy as np

from s2s_ad.rules import adjoint

_SHIFTS = ({"x": (5,)}, {"x": (4,)}, {"x": (3, 4)}, {"x": (3, 4), "axes": 1}, {"x": (2, 3, 5), "axes": (0, 2)})


@adjoint(np.fft.fftshift, linear=True, examples=_SHIFTS)
def fftshift(out, x, axes=None, *, d_out):
    d_x = np.fft.ifftshift(d_out, axes)


@adjoint(np.fft.ifftshift, linear=True, examples=_SHIFTS)
def ifftshift(out, x, axes=None, *, d_out):
    d_x = np.fft.fftshift(d_out, axes)
