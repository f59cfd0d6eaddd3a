"""The API's ``backend=`` names and the target each stands for.

Input: a backend's name, as the user gives it to ``grad``, ``jvp``... Output: the ``Target``
(``target.py``) whose code the API runs: ``NUMPY`` for "python", ``numba.target.NUMBA`` for
"numba" (imported here, at the first such request, and never before).  Above the targets, so
that no target needs to know the others.
"""
from __future__ import annotations

from .target import NUMPY, Target

BACKENDS = ("python", "numba", "auto")  # the API's backend= values ("auto": api.auto_backend chooses)


def target_of(backend: str, compiling: bool = True, in_background: bool = False) -> Target:
    """The target the API's ``backend=`` names: "python" (NumPy's code, run as it is) or "numba"
    (that code compiled by Numba: ``numba.target``, imported here and not before); ``compiling``:
    False where the code is only shown (Numba need not be installed); ``in_background``: Numba
    compiles in a thread while the calls run the code as Python (``numba/background.py``)."""
    if backend == "python":
        return NUMPY
    if backend == "numba":
        import importlib.util
        if compiling and importlib.util.find_spec("numba") is None:
            raise ImportError("backend='numba' needs Numba, an optional extra: pip install 's2s_ad[numba]'")
        from .numba.target import NUMBA, NUMBA_IN_BACKGROUND
        return NUMBA_IN_BACKGROUND if in_background else NUMBA
    if backend == "auto":
        raise ValueError("backend='auto' is chosen per function (api.auto_backend.choose_backend) before a target")
    raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, not {backend!r}")
