"""The array-API target: generated code run through another library's own namespace ``xp`` (PyTorch,
JAX, Dask, ``array_api_strict``), one ``ArrayAPITarget`` per namespace.

Input: the adjoint or tangent IR after its passes, and the arguments' arrays.  Output: code that calls
``xp.<name>`` where NumPy's calls ``np.<name>``.  ``target`` chooses and holds the target,
``rewrites`` keeps NumPy's meaning where the library's differs (stores, keywords, views), and
``runtime`` completes ``xp`` with the engine ops and the NumPy functions the standard lacks.
"""
