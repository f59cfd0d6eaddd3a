"""How a gradient function is pickled and deep-copied: by reference, never with its code.

Input: a ``GradientFunction``.  Output: what ``pickle`` and ``copy.deepcopy`` rebuild it from: the
user's function (by its module and qualified name, as pickle names functions) and the options it
was made with (``_made_from``), from which another process builds the code again; or, for a
derivative that is itself what its module names (``@s2s_ad.grad`` on a ``def``), that name.
``GradientFunction`` holds these functions as its ``__reduce__`` and ``__deepcopy__``.
"""

from __future__ import annotations

import sys
from typing import Any, TypeVar, Union

from .derivative import Pickled

P = TypeVar("P", bound=Pickled)


def by_reference(gradient: Pickled) -> Union[str, tuple]:
    """Pickled (and deep-copied) by reference: the user's function, by its module and qualified
    name, and the options; another process builds the code again from them.  A derivative that
    is itself what its module names (``@s2s_ad.grad`` on a ``def``) is pickled as that name."""
    if _named_by_its_module(gradient):
        return str(getattr(gradient, "__qualname__"))  # (set by functools.update_wrapper)
    return (made_as(gradient), gradient._made_from)


def copied(gradient: P, memo: dict) -> P:
    """A deep copy: the same derivative made again from the same function and options."""
    return made_as(gradient)(*gradient._made_from)


def made_as(obj: Any) -> type:
    """The class ``obj`` was made as: a gradient whose cached calls run a ``__call__`` of its own has
    a class for itself alone (``code_tables.use_hit``), a subclass of that one."""
    own = type(obj)
    return own.__base__ if own.__dict__.get("_of_one_object", False) else own  # type: ignore[return-value]


def _named_by_its_module(obj: Any) -> bool:
    """``obj`` is what its module calls it by its qualified name (a decorated ``def``)."""
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    found: Any = module
    for part in (getattr(obj, "__qualname__", "") or "<none>").split("."):
        found = getattr(found, part, None)
    return found is obj
