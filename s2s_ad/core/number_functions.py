"""NumPy's ``sin`` and ``cos`` of one number, by ``math`` where it gives NumPy's value.

Input: anything NumPy's function takes.  Output: what it gives, to a few ulps: where ``x`` is a
Python float or NumPy's float64 (and not an infinity, where ``math`` raises), the
``math`` function's value, a Python float; anything else (an array, a float32, a complex number), and
where ``math`` raises (an infinity), NumPy's function itself (its NaN, and its warning).

Why: ``np.cos(x)`` on one number costs about four times ``math.cos(x)``, and hands back NumPy's
float64, whose arithmetic with Python floats costs three times theirs.  The Python target writes a
reverse loop's adjoint products (``d_x = d_out * np.cos(x)``) with these (``passes/number_math.py``),
which keeps its adjoints Python floats.  The pass hands over the adjoint the value multiplies (and the
one the product is added to): a Python float is weakly typed (NEP 50), so its product with NumPy's
float32 is a float32 where NumPy's float64 made a float64; a float32 adjoint (or any but a Python
float or float64) keeps NumPy's function, and the product its precision.  The two agree to a few ulps: bit for bit on 400,000 numbers on
the machine this was written on (AMD EPYC, AVX-512, NumPy 2.4.6: NumPy's float64 ``sin`` and ``cos`` call
the C library's, as ``math``'s do); NumPy 1.22 to 1.26 on AVX-512 machines compute them by vector code
of their own, up to 3 ulps from the C library's in the tests (the fact ``on_a_number`` allows four,
checked against NumPy on every rule example).  In a derivative factor that is rounding: both are within
a few ulps of the true value.  ``sinh`` and ``cosh`` are left to NumPy.  (Two bodies alike: one shared
would cost a second call per element.)
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def sin_of_number(x: Any, factor: Any = 1.0, addend: Any = 0.0) -> Any:
    """``np.sin(x)``, by ``math.sin`` where ``x`` is a Python float or NumPy's float64, and so are the
    ``factor`` that multiplies the value and the ``addend`` the product is added to."""
    f, a = factor.__class__, addend.__class__
    if (x.__class__ is float or x.__class__ is _FLOAT64) and (f is float or f is _FLOAT64) and \
            (a is float or a is _FLOAT64):
        try:
            return math.sin(x)
        except ValueError:  # (an infinity)
            pass
    return np.sin(x)


def cos_of_number(x: Any, factor: Any = 1.0, addend: Any = 0.0) -> Any:
    """``np.cos(x)``, by ``math.cos`` where ``x`` is a Python float or NumPy's float64, and so are the
    ``factor`` that multiplies the value and the ``addend`` the product is added to."""
    f, a = factor.__class__, addend.__class__
    if (x.__class__ is float or x.__class__ is _FLOAT64) and (f is float or f is _FLOAT64) and \
            (a is float or a is _FLOAT64):
        try:
            return math.cos(x)
        except ValueError:  # (an infinity)
            pass
    return np.cos(x)


_FLOAT64 = np.float64  # (one global read in each test, not two)
