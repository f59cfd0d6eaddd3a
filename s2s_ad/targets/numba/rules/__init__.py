"""The Numba target's compiled versions of the templates' helpers and of NumPy functions Numba lacks
or takes fewer arguments of (``rules.compiled(helper, target="numba")``): np.pad and ``pad_grad``,
reductions with ``axis=`` and ``keepdims=``, ``matmul_grad_a``...

Input: the Python helpers, imported from the template modules they are defined in
(``s2s_ad.templates.<module>``, through ``template_modules.template``).  Output: one factory per helper, declared in
the rule registry's table of the "numba" target; ``numba.runtime`` imports this package before
reading that table (``rules.compiled_versions("numba")``) and registers each factory's typing function
as a Numba overload.  One module here per template module it serves, named after it
(numpy_shape's adjoints of joining arrays apart, in numpy_joining, with np.concatenate and np.stack of a list;
its rules that copy elements in numpy_copies: np.tile, np.repeat, np.take's adjoints, np.ndim; the helpers of
its factorizations and determinants in numpy_linalg_factors; the adjoints of np.take_along_axis and np.append, np.fft's shifts and np.asanyarray in numpy_pieces).  Nothing here
imports Numba when loaded: each factory is handed ``numba.types`` and imports what else it needs.

Every version must do what its Python helper does for the types it accepts (returning None where it
does not compile a call, which then runs as Python); tests/targets/test_numba_backend.py compares the two.
"""
from __future__ import annotations

from . import (numpy_copies, numpy_creation, numpy_grids, numpy_joining, numpy_linalg,  # (declare them)
               numpy_linalg_factors, numpy_padding, numpy_pieces, numpy_reductions, numpy_shape, numpy_signal,
               numpy_statistics, operators, pymath, python_data)
