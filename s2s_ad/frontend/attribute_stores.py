"""Stage 1a (a part of ``sugar.py``): an attribute store into an object the function made and holds
by one name alone, ``state.velocity = state.velocity + 0.1 * force``, read as that name bound to the
object with the attribute replaced: ``state = state.SET_ATTRIBUTE("velocity", ...)``, which the
lowering reads as a new record of the same class (``object_calls.record_method``).

Binding the name again is what Python's store does only where nothing else can see the object: so
the rewrite is made only where, in the whole function, ``state`` is never a parameter (the caller's
object would change), is bound only by ``state = <call>`` (a new object, at its own statement), and
is read only as ``state.<attribute>`` or ``state.method(...)`` (never passed on, held by a container
or another name, or returned); no nested ``def`` or lambda stores into it; and (checked while
lowering: ``HANDS_ON``) no method called on it gives back the object itself or anything holding it.  ``state.v += d``
reaches here already split by ``sugar.py`` into a read, a name's update (which the memory model follows:
on an array, Python's ``+=`` writes the array itself, which other names may hold) and this store.
What is not rewritten stays an attribute store, which ``subset.py`` refuses with ``refusal``'s words."""
from __future__ import annotations

from typing import Any, Optional

import gast
from ..core.identity import IdentitySet

# The method name the lowering reads as "this object, its attribute replaced" (read before any method
# of the object's class).
SET_ATTRIBUTE = "__s2s_ad_set_attribute__"
REFUSAL = "s2s_ad_refusal"  # (the attribute of a store's target left as it is: why)
HANDS_ON = "s2s_ad_hands_on"  # (a method call's node: what it gives back must not hold the object)
MADE_BY = "s2s_ad_made_by"  # (the attribute of that call's node holding the callees that made the object)


def stores_an_attribute(stmt: Any) -> bool:
    """``name.attr = value`` (one target)."""
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Attribute)
            and isinstance(stmt.targets[0].value, gast.Name))


def refusal(function: gast.FunctionDef, target: gast.Attribute) -> str:
    """Why the store into ``target`` (``name.attr``) of ``function`` is not read as a new binding."""
    name = target.value.id if isinstance(target.value, gast.Name) else "the object"
    why = _not_private(function, name) or "it cannot be read as a new binding of one name"
    return f"{why}; keep the value in a name of its own, or make a new object (dataclasses.replace(obj, attr=v))"


def rewrite_stores(function: gast.FunctionDef) -> None:
    """Rewrite every attribute store of ``function``'s own statements that ``_not_private`` allows."""
    nested = IdentitySet(n for d in gast.walk(function) if d is not function and isinstance(d, (gast.FunctionDef, gast.Lambda))
                         for n in gast.walk(d))
    checked: dict[str, Optional[str]] = {}
    makers: dict[str, list] = {}
    for parent in list(gast.walk(function)):
        if parent in nested:
            continue
        for field_name in ("body", "orelse"):
            block = getattr(parent, field_name, None)
            if not (isinstance(block, list) and block and isinstance(block[0], gast.stmt)):
                continue
            for position, stmt in enumerate(block):
                if not stores_an_attribute(stmt):
                    continue
                target = stmt.targets[0]
                name = target.value.id
                if name not in checked:  # (before any store into it is rewritten)
                    checked[name] = _not_private(function, name)
                    makers[name] = _makers(function, name)
                if checked[name] is None:
                    block[position] = _rebinding(stmt, target, name, makers[name])
                else:  # (subset.py refuses the store, saying why)
                    setattr(target, REFUSAL, refusal(function, target))


def _makers(function: gast.FunctionDef, name: str) -> list:
    """The callees of ``name = <call>`` in ``function``: each must make a new object (a class), which the
    lowering checks (a function could hand back an object something else holds)."""
    return [n.value.func for n in gast.walk(function) if isinstance(n, gast.Assign) and len(n.targets) == 1
            and isinstance(n.targets[0], gast.Name) and n.targets[0].id == name and isinstance(n.value, gast.Call)]


def _rebinding(stmt: gast.Assign, target: gast.Attribute, name: str, makers: list) -> gast.Assign:
    """``name = name.SET_ATTRIBUTE("attr", value)``, on the store's line; the call holds ``makers``
    (``MADE_BY``)."""
    def located(node: Any) -> Any:
        return gast.copy_location(node, target)
    owner = located(gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None))
    call = located(gast.Call(func=located(gast.Attribute(value=owner, attr=SET_ATTRIBUTE, ctx=gast.Load())),
                             args=[located(gast.Constant(value=target.attr, kind=None)), stmt.value], keywords=[]))
    setattr(call, MADE_BY, makers)
    bound = located(gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None))
    return gast.copy_location(gast.Assign(targets=[bound], value=call, type_comment=None), stmt)


def _not_private(function: gast.FunctionDef, name: str) -> Optional[str]:
    """Why another part of the program may see the object ``name`` holds, so a store into it is not a new
    binding of ``name`` alone; None where only ``name`` holds it (see the module docstring)."""
    args = function.args
    params = [a.id for a in [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs]
              if isinstance(a, gast.Name)]
    if name in params:
        return f"{name} is a parameter: the store would change the caller's object, which s2s_ad does not do"
    nested = IdentitySet(n for d in gast.walk(function) if d is not function
                         and isinstance(d, (gast.FunctionDef, gast.Lambda)) for n in gast.walk(d))
    own = IdentitySet(n for n in gast.walk(function) if n not in nested)
    read_as_attribute = IdentitySet()
    stored = IdentitySet()
    for node in gast.walk(function):
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and node.value.id == name:
            if isinstance(node.ctx, gast.Store) and node not in own:
                return f"a nested def or lambda stores into {name}"
            read_as_attribute.add(node.value)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and isinstance(node.func.value, gast.Name) and node.func.value.id == name:
            setattr(node, HANDS_ON, name)  # name.method(...): the lowering checks it does not hand the object on
        if isinstance(node, (gast.Global, gast.Nonlocal)) and name in node.names:
            return f"{name} is declared global or nonlocal"
        if isinstance(node, gast.Assign):
            for target in node.targets:
                for bound in gast.walk(target):
                    if isinstance(bound, gast.Name) and bound.id == name and isinstance(bound.ctx, gast.Store):
                        if target is not bound or not isinstance(node.value, gast.Call) or node not in own:
                            return f"{name} is bound otherwise than by name = <a call> (line {node.lineno})"
                        stored.add(bound)
    for node in gast.walk(function):
        if isinstance(node, gast.Name) and node.id == name and node not in read_as_attribute \
                and node not in stored:
            return (f"{name} is used otherwise than by its attributes (line {getattr(node, 'lineno', '?')}: passed "
                    "on, held by a container or another name, returned, or bound by a loop), so another name may "
                    "hold the same object")
    return None
