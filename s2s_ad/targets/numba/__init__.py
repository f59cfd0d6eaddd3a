"""The Numba target (``backend="numba"``): the NumPy target's code compiled by ``numba.njit``.

Input: the adjoint or tangent IR after its passes, as for the NumPy target.  Output: a function that
runs the module compiled, or the same Python code where Numba refuses it.  ``target`` is the
``NumbaTarget``; ``tape`` writes each slot of the recording plan as a typed stack; ``runtime``
registers Numba's versions of the engine ops and of the templates' helpers, which ``rules`` declares
(one module per template module) with the ``kernels`` they share.  Nothing here imports Numba when
loaded: ``runtime`` does, at the first build for this target.
"""
