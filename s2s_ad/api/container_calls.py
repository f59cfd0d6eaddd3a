"""A gradient function's call with container arguments or ``has_aux``: leaves in, structures out.

Input: a ``GradientFunction``, a call's arguments and their kinds (a dict, list, tuple, namedtuple or
dataclass argument is a ``containers.Tree``).  Output: what the call returns: the generated code
(``code_tables.specialise``) run on the arguments' leaves, the gradient of each argument
differentiated rebuilt with its structure, the aux's with its own, and the value beside them where
the call asks for it (``value_and_grad``).  What the caller gets shares memory with nothing the
caller holds (``owned_outputs``, which forward mode's ``jvp`` uses too).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..core import arguments, containers
from ..targets.target import Target
from .calling import _compiled, _run
from .derivative import CalledWithContainers


def call_with_containers(derivative: CalledWithContainers, args: tuple, kinds: tuple,
                         target: Optional[Target] = None) -> Any:
    """A call with container arguments or ``has_aux``: leaves in, the gradient rebuilt with the
    structure of each argument differentiated (for ``target``, this derivative's own by default)."""
    target = derivative._target if target is None else target
    built = derivative._specialise(args, kinds, target)
    leaves = arguments.flat(args, kinds)
    loss, aux_leaves, gradient = _parts_returned(_run(_compiled(built.function), leaves), derivative._value_used,
                                                 derivative._has_aux)
    aux_leaves = owned_outputs(target, built.function, tuple(aux_leaves), leaves)
    held = leaves + tuple(aux_leaves)  # what the gradients must not share memory with: every leaf in, the aux out
    aux = containers.unflatten(built.aux_tree, aux_leaves) if derivative._has_aux else None
    if derivative._value_used and loss.__class__ is not float and np.ndim(loss) != 0:
        derivative._refuse_result(loss)
    if loss.__class__ is np.ndarray:  # a 0-d array the function returned: maybe the caller's own
        loss = loss.copy()
    params = list(derivative._signature.parameters)
    by = [kinds[params.index(w)] for w in derivative.wrt]
    primals = arguments.flat(tuple(args[params.index(w)] for w in derivative.wrt), tuple(by))
    flat = (gradient,) if len(primals) == 1 else tuple(gradient)
    gradients = arguments.regroup(target.handed_out(tuple(map(target.like, primals, flat)), held), by)
    gradient = tuple(gradients) if derivative._several else gradients[0]
    if derivative._with_value:
        return ((loss, aux) if derivative._has_aux else loss), gradient
    return (gradient, aux) if derivative._has_aux else gradient


def owned_outputs(target: Target, function: Optional[Callable], values: Any, held: tuple) -> Any:
    """``values`` (an aux's leaves, ``jvp``'s primal output: a value, or a tuple or list of them) as
    the caller gets them, sharing memory with nothing the caller holds (docs/api.md): not only the
    arguments in ``held`` but a module-level array the function returned, and what an earlier call
    returned.  Copied unless the code that made them returns only new objects of its own
    (``sharing.fresh_returns``); then compared with ``held`` alone.  Arrays that cannot be written
    (JAX's) are never copied: nothing can see them shared."""
    if getattr(function, "fresh_returns", False) or getattr(target, "memory", None) == "immutable":
        return target.handed_out(values, held)
    return target.handed_out(values, held, copy_all=True)


def _parts_returned(returned: Any, with_value: bool, has_aux: bool) -> tuple[Any, tuple, Any]:
    """The value (None where the code returns none), the aux's leaves (empty without ``has_aux``) and
    the gradient, of what an adjoint returned: the gradient, beside it the value, the aux's leaves,
    or both as a pair (``pipeline.build_reverse``)."""
    if not (with_value or has_aux):
        return None, (), returned
    beside, gradient = returned
    if with_value and has_aux:
        return beside[0], tuple(beside[1]), gradient
    return (beside, (), gradient) if with_value else (None, tuple(beside), gradient)
