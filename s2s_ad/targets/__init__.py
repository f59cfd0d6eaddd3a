"""Targets: where generated IR becomes code that runs.

Input: an adjoint or tangent ``ir.Function`` after its passes.  Output: Python source and the
function made from it, for NumPy (``target``), for Numba (``numba.target``, with its runtime and
tape) or for other array libraries (``array_api.target``).  ``emit`` and ``linetext`` print the IR
as readable Python; ``backends`` chooses a target by name.  A target names the passes it wants;
it never imports one.
"""
