"""The code a gradient function runs or shows for arguments of given kinds, built on first use.

Input: a ``GradientFunction`` (the user's function, ``wrt``, its options) and the arguments' kinds,
with the target that writes the code.  Output: a ``Built`` record from the pipeline, kept in the
transform cache (``_CACHE``) under a key holding all that makes the code differ: the adjoint of a
first derivative (``adjoint``), or the derivative as a plain generated function of the same
parameters (``function_for``), which the next order reads back.  What has no derivative is refused
here, where the code is built, so never on a call's hot path: a derivative by a string, None or
function argument (``refuse_constant_wrt``), ``grad`` of a gradient that is not a number
(``check_scalar_result``).  ``GradientFunction`` holds these functions as its methods.
"""

from __future__ import annotations

import inspect
from typing import Callable, Optional

from ..core import arguments, containers
from ..core.kinds import Array, Constant
from ..driver.higher_order import build_derivative_of, build_gradient_only, lost_outside
from ..driver.pipeline import Built, build_reverse
from ..targets.target import SOURCE, Target
from .calling import _CACHE, _user_facing
from .derivative import Building


@_user_facing
def adjoint(gradient: Building, kinds: tuple, target: Optional[Target] = None,
            with_value: Optional[bool] = None) -> Built:
    """The adjoint for arguments of these kinds, as ``target`` writes it: this derivative's own
    target for code a call runs, ``SOURCE`` for the adjoint a higher level reads back (``function_for``).
    ``with_value``: whether the code returns the function's value beside the gradient; by default,
    where a call uses it (``_value_used``).  Without it, what only the value needs is not computed;
    the cache keeps the two apart (``grad(f)`` and ``value_and_grad(f)`` share the cache)."""
    target = gradient._target if target is None else target
    with_value = gradient._value_used if with_value is None else with_value
    refuse_constant_wrt(gradient.fn, gradient._signature, gradient.wrt, kinds)
    key = (getattr(gradient.fn, "__code__", None), gradient.wrt, kinds) + (("aux",) if gradient._has_aux else ()) \
        + (("with value",) if with_value else ())
    return _CACHE.get(gradient.fn, key, lambda: build_reverse(gradient.fn, gradient.wrt, kinds,
                                                              has_aux=gradient._has_aux, target=target,
                                                              with_value=with_value), target)


@_user_facing
def function_for(gradient: Building, kinds: tuple, source: Target = SOURCE) -> Built:
    """This derivative as a plain generated function of the same parameters, returning
    exactly what a call returns, for arguments of these kinds.  It is valid input to
    the transformer: that is how the next order is taken.  ``source``: the target writing a
    first derivative's adjoint, the one the reading target asks for (``Target.read_back``: Numba's
    forward mode reads a tape of arrays; reverse mode, and the Python backend, nested tuples)."""
    params = list(gradient._signature.parameters)
    read_by = () if source is SOURCE else (source.name,)
    refuse_constant_wrt(gradient.fn, gradient._signature, gradient.wrt, kinds)
    if any(isinstance(k, containers.Tree) for k in kinds):
        if gradient.inner is not None or gradient._has_aux:
            raise TypeError(f"higher derivatives of {gradient!r} with containers (dict, list, tuple, dataclass) "
                            "as arguments: use s2s_ad.hessian, or pass the arrays as separate arguments")
        # A function of the leaves returning the gradient's leaves (a tuple if more than one).
        built = adjoint(gradient, kinds, source, with_value=False)  # read back by the next level
        leaf_params = list(inspect.signature(built.function).parameters)[:-1]
        by = tuple(leaf_params[i] for i in arguments.leaf_positions(params, kinds, gradient.wrt))
        return _CACHE.get(gradient.owner, gradient.key + (kinds,) + read_by, lambda: build_gradient_only(
            gradient.fn, built, leaf_params, by, False, lost_outside(gradient.fn, kinds, leaf_params, by)))
    if gradient.inner is None:  # (no value: forward mode over it would only carry the value's tangent along)
        built = adjoint(gradient, kinds, source, with_value=False)  # read back by the next level
        return _CACHE.get(gradient.owner, gradient.key + (kinds,) + read_by, lambda: build_gradient_only(
            gradient.fn, built, params, gradient.wrt, gradient._wrap_single,
            lost_outside(gradient.fn, kinds, params, gradient.wrt), has_aux=gradient._has_aux))
    gradient.inner.check_scalar_result(kinds)
    inner = gradient.inner.function_for(kinds)
    return _CACHE.get(gradient.owner, gradient.key + (kinds,), lambda: build_derivative_of(
        inner, params, kinds, gradient.wrt, gradient._several))


def check_scalar_result(gradient: Building, kinds: tuple) -> None:
    """Refuse to be differentiated by ``grad`` where the gradient is not a number."""
    params = list(gradient._signature.parameters)
    arrays = [w for w in gradient.wrt if isinstance(kinds[params.index(w)], Array)]
    if gradient._several or arrays:
        what = "a tuple" if gradient._several else f"an array (the gradient by {arrays[0]})"
        raise TypeError(f"grad of {gradient!r}: its result is {what}, not a number; "
                        f"use s2s_ad.hessian or s2s_ad.jacobian")


def refuse_constant_wrt(fn: Callable, signature: inspect.Signature, wrt: tuple, kinds: tuple) -> None:
    """Refuse to differentiate by a string, None or function argument: the code is specialised on its value
    (a static argument), so it has no derivative; a zero would be made up (checked when the
    code for these kinds is built, so never on the hot path)."""
    params = list(signature.parameters)
    for w in wrt:
        kind = kinds[params.index(w)]
        if isinstance(kind, Constant):
            value = kind.value
            what = 'None' if value is None else 'a string' if isinstance(value, str) else 'a function'
            raise TypeError(f"grad of {getattr(fn, '__name__', fn)!r} with respect to {w}: "
                            f"{w} = {value!r} is {what}, which has no "
                            f"derivative (the code is specialised on its value); differentiate with respect "
                            f"to a float argument (wrt=...)")

