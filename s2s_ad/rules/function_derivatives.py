"""Derivatives of a function a rule is handed as a value (``scipy.integrate.odeint``'s dynamics).

Input: the function (the user's, passed to the differentiated call as an argument), the positions of
its parameters to differentiate by, and the values it is called with.  Output: its Jacobian blocks
(``jacobian``), and the tangent of the gradient of ``sum(w * func(...))`` along a direction
(``hessian_vector``: one row of second derivatives at a time), both made by s2s_ad from the
function's source.  A rule's helpers run them where the generated code runs.

The API makes these derivatives (``api.jacobian``, ``api.jvp`` of ``api.grad``), and this layer may not
import it (a package imports only the stages below it): the API registers its ``Provider`` here when
it is imported (``provide``), and the helpers ask for it (``provider``).  s2s_ad's package imports
the API, so the provider is always there by the time generated code runs.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Protocol


class Provider(Protocol):
    """What the API gives: each method returns a function, made once per function and positions."""

    def jacobian(self, func: Callable, wrt: tuple[int, ...]) -> Callable[..., tuple]:
        """``(*args) -> blocks``: ``d func(*args) / d args[i]`` for each ``i`` of ``wrt``, each shaped
        ``out.shape + args[i].shape``."""

    def hessian_vector(self, func: Callable, wrt: tuple[int, ...]) -> Callable[..., tuple]:
        """``(w, args, directions) -> blocks``: the derivative along ``directions`` (one per ``wrt``
        position) of the gradient of ``sum(w * func(*args))`` by the ``wrt`` arguments, a block per
        position shaped like its argument."""


_PROVIDER: Optional[Provider] = None


def provide(provider: Provider) -> None:
    """Register the API's provider (``api/dynamics.py`` does, on import)."""
    global _PROVIDER
    _PROVIDER = provider


def provider() -> Provider:
    """The provider the API registered."""
    if _PROVIDER is None:  # (only where s2s_ad.rules is used without the package: import s2s_ad)
        raise RuntimeError("derivatives of a function passed as a value need s2s_ad's API: import s2s_ad")
    return _PROVIDER


def jacobian(func: Callable, wrt: tuple[int, ...]) -> Callable[..., tuple]:
    """``provider().jacobian(func, wrt)``."""
    return provider().jacobian(func, wrt)


def hessian_vector(func: Callable, wrt: tuple[int, ...]) -> Callable[..., Any]:
    """``provider().hessian_vector(func, wrt)``."""
    return provider().hessian_vector(func, wrt)
