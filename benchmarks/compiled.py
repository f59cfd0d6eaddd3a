"""The compiled columns, both optional: the hand-written gradients compiled with ``numba.njit``
(``numba_twins.py``; the limit for a compiled path) and s2s_ad's own compiled path,
``s2s_ad.grad(f, wrt=..., backend="numba")``.

Numba is imported only here, and only when asked for (``numba_or_reason``); where it is missing,
or where ``s2s_ad.grad`` takes no ``backend`` keyword yet, each column says why it is empty
instead of failing.  Every compiled gradient is called once before it is timed (that call
compiles it) and compared with the NumPy hand gradient.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Optional

import s2s_ad
from benchmarks.cases import Case

NO_NUMBA = "n/a (numba not installed)"
NO_BACKEND_KEYWORD = "n/a (no backend keyword)"


@dataclass(frozen=True)
class Compiled:
    """A compiled gradient of one workload ready to time, or why there is none (``missing``)."""

    gradient: Optional[Callable[..., Any]] = None
    missing: Optional[str] = None


def numba_or_reason() -> tuple[Any, Optional[str]]:
    """``(numba, None)`` where Numba imports, else ``(None, why)``."""
    try:
        import numba
    except ImportError:
        return None, NO_NUMBA
    except Exception as exc:  # installed but broken (a NumPy it does not support, say)
        return None, f"n/a (numba does not import: {type(exc).__name__}: {exc})"
    return numba, None


def has_backend_keyword() -> bool:
    """Whether ``s2s_ad.grad`` takes ``backend=`` (the compiled path of issue 20)."""
    return "backend" in inspect.signature(s2s_ad.grad).parameters


def s2s_ad_numba_missing() -> Optional[str]:
    """Why the s2s_ad compiled column is empty here, or None when it can be measured."""
    _, reason = numba_or_reason()
    if reason is not None:
        return reason
    return None if has_backend_keyword() else NO_BACKEND_KEYWORD


def hand_numba(case: Case) -> Compiled:
    """The workload's numba-compatible hand gradient (``numba_twins.TWINS``), compiled."""
    numba, reason = numba_or_reason()
    if numba is None:
        return Compiled(missing=reason)
    from benchmarks.numba_twins import TWINS
    if case.name not in TWINS:
        return Compiled(missing="n/a (no numba-compatible hand gradient)")
    return Compiled(gradient=numba.njit(TWINS[case.name]))


def s2s_ad_numba(case: Case) -> Compiled:
    """``s2s_ad.grad(f, wrt=..., backend="numba")``, where both Numba and the keyword exist."""
    reason = s2s_ad_numba_missing()
    if reason is not None:
        return Compiled(missing=reason)
    make: Callable[..., Any] = s2s_ad.grad  # typed loosely: the keyword is newer than this file
    return Compiled(gradient=make(case.function, wrt=case.wrt, backend="numba"))
