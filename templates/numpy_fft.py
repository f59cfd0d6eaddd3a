"""Rules for ``np.fft``'s shifts: permutations of the elements, so their adjoints are the inverse shifts;
and the functions of ``np.fft`` and ``np.emath`` that make complex values, which s2s_ad refuses."""
import numpy as np

from s2s_ad.rules import adjoint, declare

_SHIFTS = ({"x": (5,)}, {"x": (4,)}, {"x": (3, 4)}, {"x": (3, 4), "axes": 1}, {"x": (2, 3, 5), "axes": (0, 2)})


@adjoint(np.fft.fftshift, linear=True, examples=_SHIFTS)
def fftshift(out, x, axes=None, *, d_out):
    d_x = np.fft.ifftshift(d_out, axes)


@adjoint(np.fft.ifftshift, linear=True, examples=_SHIFTS)
def ifftshift(out, x, axes=None, *, d_out):
    d_x = np.fft.fftshift(d_out, axes)


# Complex values from real ones (or real ones only from complex): s2s_ad's rules are written for real
# values, so a call of these is refused where it is lowered, with what to write instead (driver/complex_values.py).
declare(np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft,
        np.fft.irfft, np.fft.rfft2, np.fft.irfft2, np.fft.rfftn, np.fft.irfftn, np.fft.hfft, np.fft.ihfft,
        np.emath.sqrt, np.emath.log, np.emath.log2, np.emath.log10, np.emath.logn, np.emath.power,
        np.emath.arccos, np.emath.arcsin, np.emath.arctanh, makes_complex=True)
