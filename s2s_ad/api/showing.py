"""What a gradient function shows of the code it runs: its source, and the derivative explorer's page.

Input: a ``GradientFunction``, and arguments like a call's (nothing is run) or none.  Output: the
generated source as text (``source``: the code the last call ran, or before any call the generic
code; ``source_for``: the code for such arguments, through another library's namespace for its
arrays), or the explorer's HTML page (``html_for``; ``repr_html`` for a notebook's display).  The
code comes from ``built_code``, the very code a call runs.  ``GradientFunction`` holds these
functions as its methods (``source`` as a property).
"""

from __future__ import annotations

import html
from typing import Any, Optional

from ..core.errors import TransformError
from ..core.runtime import checkpoint_stats_of
from ..core.kinds import UNKNOWN
from ..driver.reach import whole_source
from ..targets.target import Target
from .auto_backend import headed
from . import explorer
from .calling import _target_of_arguments, _user_facing
from .derivative import Derivative, Shown


@_user_facing
def source(gradient: Shown) -> str:
    """The adjoint's source: the one the last call ran, or before any call the generic one."""
    if gradient._last_source is None:
        gradient._last_source = source_of(gradient, (UNKNOWN,) * len(gradient._signature.parameters))
    return gradient._last_source


@_user_facing
def source_for(gradient: Shown, *args: Any, **kwargs: Any) -> str:
    """The adjoint's source specialised for these arguments (nothing is run).  A higher
    derivative shows every generated module it runs: the wrapper, forward mode over the order
    below, and the tangents of the adjoints of the helpers and of their tapes.  For arrays of
    another library, the code that runs through its namespace (``xp``)."""
    args = gradient._bind(args, kwargs)
    target = _target_of_arguments(args, tuple(map(type, args)), gradient._target)
    shown = source_of(gradient, target.argument_kinds(gradient.fn, args), target)
    return headed(shown, getattr(gradient, "backend_chosen", None))  # (backend="auto": what it chose, why)


def source_of(gradient: Shown, kinds: tuple, target: Optional[Target] = None) -> str:
    """The source of the code ``gradient`` runs for arguments of ``kinds`` (as ``target`` writes it)."""
    if gradient.inner is None:
        return gradient._adjoint(kinds, target).source
    return whole_source(gradient.function_for(kinds).function)


@_user_facing
def html_for(gradient: Shown, *args: Any, **kwargs: Any) -> str:
    """The derivative explorer's page (explorer.py) for the code a call with these arguments runs."""
    return page(gradient, gradient._target.argument_kinds(gradient.fn, gradient._bind(args, kwargs)))


def repr_html(gradient: Shown) -> str:
    """A notebook's display: the explorer's page for the code the last call ran (before any call,
    for arguments of unknown kinds); for a function s2s_ad refuses, why."""
    try:
        return page(gradient, gradient._last_kinds or (UNKNOWN,) * len(gradient._signature.parameters))
    except TransformError as exc:
        return f"<pre>{html.escape(f'{gradient!r}: {exc}')}</pre>"


def page(gradient: Shown, kinds: tuple) -> str:
    """The derivative explorer's page (explorer.py) for the code ``gradient`` runs for ``kinds``."""
    first: Derivative = gradient
    by = []
    while first.inner is not None:
        by.append(first.wrt)
        first = first.inner
    by.append(first.wrt)
    entry = gradient._adjoint(kinds).function if gradient.inner is None else gradient.function_for(kinds).function
    title = " ".join(f"∂/∂{','.join(w)}" for w in by) + f" {getattr(first.fn, '__name__', first.fn)}"
    chosen = getattr(gradient, "backend_chosen", None)
    if chosen is not None and chosen.asked == "auto":  # (which backend runs, in the page's title)
        title += f" · backend='auto' chose {chosen.backend!r}"
    return explorer.page_for(first.fn, [entry], first.wrt, kinds, title)


def stats(gradient: Derivative) -> list[dict[str, Any]]:
    """For each loop ``checkpointed(steps, snapshots=c)`` the last call ran, what it did: ``line``,
    ``steps`` (summed over its runs), ``snapshots`` (``c``), ``advances`` (steps run unrecorded, the
    forward sweep's included), ``taped`` (steps recorded), ``peak_snapshots``, ``peak_bytes`` (those
    snapshots' bytes, the loop's state measured as it was kept) and ``runs``."""
    return checkpoint_stats_of(gradient)
