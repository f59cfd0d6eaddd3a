"""The source language's vocabulary: the NumPy names the engine itself refers to.

User code is written in Python and NumPy; the templates (``templates/``)
say what each NumPy function means.  The engine's stages above the seam
(lowering, analysis, the generators, the optimiser) refer to NumPy in a few
places only: the ops they create themselves (a copy, a shape, a rank, a sum
that undoes broadcasting), a few functions whose results they reason about
(``arange``, ``shape``), and tests of what a constant or a callee is (an
array, a NumPy number, a ufunc, a generator object).  Those are all named
here, so that nothing above the seam names NumPy's types or imports it:
they name the *source language*, not the library that runs the code.  How
these ops are written and run is the target's business (``target.py``): a
name here is an op identity, which a target spells (``np.copy``, or
``xp.copy``) and may implement its own way.

Input: none (NumPy's objects).  Output: op identities, type tests and the
names of the modules whose functions draw from a global random generator.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import numpy as np

# -- ops the engine creates or reasons about (op identities: a target spells them) ---------------

copy = np.copy  # a value of its own: a recorded slice, a tangent written in place later
shape = np.shape  # a value's shape: recorded instead of the value where the shape is all the adjoint reads
ndim = np.ndim  # a value's rank: chooses between a row (a view) and an element at run time
sum = np.sum  # noqa: A001 (the language's sum, not Python's): undoes broadcasting in an adjoint
arange = np.arange  # its result is a 1-d array
reshape = np.reshape
zeros = np.zeros
size = np.size
asarray = np.asarray  # a display's tangents as the array NumPy makes of the display, in an elementwise rule

# Modules whose functions draw from a global random generator (its state must be replayed).
DRAWING_MODULES = ("numpy.random", "random")


# -- what a value or a callee is -----------------------------------------------------------------

def is_array_value(value: Any) -> bool:
    """An array of the source language (a NumPy ndarray; its ``ndim`` is its rank)."""
    return isinstance(value, np.ndarray)


def is_complex_value(value: Any) -> bool:
    """A complex number (Python's or the library's) or an array of complex numbers."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "c"
    return isinstance(value, (complex, np.complexfloating))


def is_complex_type(value: Any, named: bool = False) -> bool:
    """A complex type or dtype (``complex``, ``np.complex128``, ``np.dtype("complex64")``); with ``named``
    (a value given where a dtype is asked for), a string naming one too (``"complex128"``, ``"D"``:
    elsewhere ``"F"`` is an order)."""
    if isinstance(value, type):
        return issubclass(value, (complex, np.complexfloating))
    if isinstance(value, np.dtype):
        return value.kind == "c"
    if named and isinstance(value, str):
        try:
            return np.dtype(value).kind == "c"
        except (TypeError, ValueError):
            return False
    return False


def takes_dtypes(fn: Any) -> bool:
    """Whether a type passed to ``fn`` is read as a dtype: the array library's functions (not
    ``isinstance``, which only tests a value)."""
    return (getattr(fn, "__module__", None) or "").startswith("numpy") or getattr(fn, "__name__", None) == "astype"


def is_library_scalar(value: Any) -> bool:
    """A number of the array library (``np.float64(1.5)``, ``np.int32(2)``, ``np.True_``): it has
    ``.item()``, giving the Python number."""
    return isinstance(value, np.generic)


def is_truth_value(value: Any) -> bool:
    """``True``/``False`` or the library's (``np.True_``)."""
    return isinstance(value, (bool, np.bool_))


def is_integer_value(value: Any) -> bool:
    """A Python or library integer (a truth value too: Python's bool is an int)."""
    return isinstance(value, (int, np.integer))


def is_library_scalar_type(cls: type) -> bool:
    """A number type of the array library (``np.float32``): calling it makes a number, and it is a
    constant value where code passes it (``.astype(np.float32)``)."""
    return issubclass(cls, np.generic)


def is_dtype(value: Any) -> bool:
    """A dtype object (``np.dtype("float32")``): a constant value."""
    return isinstance(value, np.dtype)


def is_scatter_add(fn: Any) -> bool:
    """``np.add.at`` (a bound method: a new object at each attribute read): the scatter-add, which
    sums repeated positions."""
    return getattr(fn, "__self__", None) is np.add and getattr(fn, "__name__", None) == "at"


def module_of(fn: Any) -> str:
    """The module a callee comes from, as its ``__module__`` says (a ufunc has none: ``numpy``)."""
    return getattr(fn, "__module__", None) or ("numpy" if is_ufunc(fn) else "")


# How users name the library's modules in their code, for messages (``np.sin``, not ``numpy.sin``).
USER_SPELLINGS = {"numpy": "np"}


def is_ufunc(fn: Any) -> bool:
    """A universal function (NumPy's, SciPy's): an elementwise, pure function of its arguments, with
    ``nout`` results."""
    return isinstance(fn, np.ufunc)


def is_generator_object(owner: Any) -> bool:
    """A random generator object of the library (``np.random.default_rng()``, a ``RandomState``);
    ``is_global_generator`` tells the one ``np.random.*`` draws from."""
    return isinstance(owner, (np.random.RandomState, np.random.Generator))


def is_global_generator(owner: Any) -> bool:
    """The generator the module functions (``np.random.normal``) draw from."""
    return owner is np.random.mtrand._rand


def errors_ignored() -> AbstractContextManager[Any]:
    """A context in which the library's arithmetic gives inf or nan without a warning (constant
    folding tries it)."""
    return np.errstate(all="ignore")
