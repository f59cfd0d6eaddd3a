"""The Numba target's compiled version of ``templates/numpy_creation.py``'s np.full for an array
``fill_value`` (Numba's own np.full takes a number only).

Each version must do what the Python function does for the types it accepts
(tests/targets/test_numba_backend.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

import numpy as np

from ....rules import compiled


@compiled(np.full)
def _full(types):
    """np.full(shape, an array) (backend="numba"; Numba's own takes a number only): the array spread
    over the shape, of its dtype, as NumPy's copyto does (shapes that do not broadcast raise)."""
    def typing(shape, fill_value, dtype=None):
        shaped = isinstance(shape, types.Integer) or \
            isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer) or \
            isinstance(shape, types.Tuple) and len(shape) == 0
        if shaped and isinstance(fill_value, types.Array) and dtype is None:
            return lambda shape, fill_value, dtype=None: np.broadcast_to(fill_value, shape).copy()
        return None
    return typing
