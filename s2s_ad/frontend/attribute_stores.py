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
What is not rewritten stays an attribute store, which ``subset.py`` refuses with ``refusal``'s words.

A method called on such an object for its effect, ``state.step(dt)`` as a statement, is read the same
way: ``state = state.CHANGED_BY("step", dt)``, which the lowering reads as the method's body run on the
object, giving back the object as the body left it (``object_stores.changed_by``: there the method's
``self`` is a parameter held by that name alone, ``PRIVATE_SELF``, and each return gives back ``self``).
The statement as written is kept (``ORIGINAL``): where the name holds no object of the user's class (a
list a call made, whose ``append`` is Python's), the lowering lowers that instead.  A name bound by a
call of a builtin (``list(...)``, ``dict(...)``) keeps its statements as written."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import gast
from ..core.identity import IdentitySet

# The method name the lowering reads as "this object, its attribute replaced" (read before any method
# of the object's class).
SET_ATTRIBUTE = "__s2s_ad_set_attribute__"
REFUSAL = "s2s_ad_refusal"  # (the attribute of a store's target left as it is: why)
HANDS_ON = "s2s_ad_hands_on"  # (a method call's node: what it gives back must not hold the object)
MADE_BY = "s2s_ad_made_by"  # (the attribute of that call's node holding the callees that made the object)
# The method name the lowering reads as "this object as its method ``name`` leaves it" (a call made for
# its effect on an object held by one name alone: object_stores.changed_by).
CHANGED_BY = "__s2s_ad_changed_by__"
# ... and "this object as the method leaves it, with what the method returned": ``name, y =
# name.GIVING("method", ...)`` for ``y = name.method(...)``
GIVING = "__s2s_ad_changed_giving__"
ORIGINAL = "s2s_ad_original"  # (the attribute of that rewritten statement holding the statement as written)
# (the attribute of a method's def read as changing its object: the name of its self, held by the caller's
# name alone, so that stores into it and changing calls on it are rewritten as for a name made here)
PRIVATE_SELF = "s2s_ad_private_self"
GIVEN_BACK = "s2s_ad_given_back"  # (a read of that self the rewrite added: return self)
# The maker of a private self: the caller checked that a class made the object (changed_by).
MADE_BY_CALLER = "the caller's object"
# (the attribute of a CHANGED_BY or GIVING call's node: the methods the function calls on that name in
# statements of their own, and whether it stores into the name's attributes: where none of those changes
# the object, a method's value may hold it, as any method's may)
CHANGES_OF_NAME = "s2s_ad_changes_of_name"


def stores_an_attribute(stmt: Any) -> bool:
    """``name.attr = value`` (one target)."""
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Attribute)
            and isinstance(stmt.targets[0].value, gast.Name))


def changes_its_object(stmt: Any) -> bool:
    """``name.method(...)`` as a statement (no ``*args`` or ``**kwargs``)."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and isinstance(call.func.value, gast.Name)
            and not call.func.attr.startswith("__s2s_ad") and not any(isinstance(a, gast.Starred) for a in call.args)
            and all(k.arg is not None for k in call.keywords))


def gives_and_may_change(stmt: Any) -> bool:
    """``y = name.method(...)`` (or ``a, b = name.method(...)``: names only), the call as
    ``changes_its_object`` takes it."""
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and _names_only(stmt.targets[0])
            and changes_its_object(gast.Expr(value=stmt.value)))


def _names_only(target: Any) -> bool:
    if isinstance(target, gast.Name):
        return True
    return isinstance(target, (gast.Tuple, gast.List)) and bool(target.elts) and all(map(_names_only, target.elts))


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
    changes = _changes_by_name(function, nested)
    for parent in list(gast.walk(function)):
        if parent in nested:
            continue
        for field_name in ("body", "orelse"):
            block = getattr(parent, field_name, None)
            if not (isinstance(block, list) and block and isinstance(block[0], gast.stmt)):
                continue
            for position, stmt in enumerate(block):
                changing, giving = changes_its_object(stmt), gives_and_may_change(stmt)
                if not stores_an_attribute(stmt) and not changing and not giving:
                    continue
                target = stmt.value.func if changing or giving else stmt.targets[0]
                name = target.value.id
                if name not in checked:  # (before any store into it is rewritten)
                    checked[name] = _not_private(function, name)
                    makers[name] = _makers(function, name)
                if changing or giving:
                    if checked[name] is None and makers[name] and not _made_by_a_builtin(makers[name]):
                        block[position] = _changed(stmt, name, makers[name], changes[name])
                elif checked[name] is None:
                    block[position] = _rebinding(stmt, target, name, makers[name])
                else:  # (subset.py refuses the store, saying why)
                    setattr(target, REFUSAL, refusal(function, target))


def _makers(function: gast.FunctionDef, name: str) -> list:
    """The callees of ``name = <call>`` in ``function``: each must make a new object (a class), which the
    lowering checks (a function could hand back an object something else holds); for the ``self`` of a
    method read as changing its object (``PRIVATE_SELF``), ``MADE_BY_CALLER``: its caller checked its."""
    if getattr(function, PRIVATE_SELF, None) == name:
        return [MADE_BY_CALLER]
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


def _made_by_a_builtin(makers: list) -> bool:
    """Whether a maker is a builtin by name (``list(...)``, ``dict(...)``): a container whose own
    methods change it, whose statements stay as written.  (A name no call binds here, a module's
    ``logging.info(...)``, has no makers and stays as written too.)"""
    return any(isinstance(m, gast.Name) and hasattr(builtins, m.id) for m in makers)


def _changes_by_name(function: gast.FunctionDef, nested: Any) -> dict[str, tuple[frozenset, bool]]:
    """For each name of ``function``'s own statements: the methods called on it in statements of their own
    (``changes_its_object``, ``gives_and_may_change``), and whether an attribute of it is stored into."""
    calls: dict[str, set] = {}
    stored: set[str] = set()
    for stmt in gast.walk(function):
        if stmt in nested:
            continue
        if changes_its_object(stmt) or gives_and_may_change(stmt):
            func = stmt.value.func
            calls.setdefault(func.value.id, set()).add(func.attr)
        elif stores_an_attribute(stmt):
            stored.add(stmt.targets[0].value.id)
    return {name: (frozenset(calls.get(name, ())), name in stored) for name in set(calls) | stored}


def _changed(stmt: Any, name: str, makers: list, changes: tuple[frozenset, bool]) -> gast.Assign:
    """``name = name.CHANGED_BY("method", *args, **kwargs)`` (for ``y = name.method(...)``: ``name, y =
    name.GIVING(...)``), on the statement's line, holding ``makers`` (``MADE_BY``) and the statement as
    written (``ORIGINAL``)."""
    call = stmt.value
    giving = isinstance(stmt, gast.Assign)

    def located(node: Any) -> Any:
        return gast.copy_location(node, call)
    owner = located(gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None))
    changed = located(gast.Call(func=located(gast.Attribute(value=owner, attr=GIVING if giving else CHANGED_BY,
                                                            ctx=gast.Load())),
                                args=[located(gast.Constant(value=call.func.attr, kind=None)), *call.args],
                                keywords=list(call.keywords)))
    setattr(changed, MADE_BY, makers)
    setattr(changed, CHANGES_OF_NAME, changes)  # (whether what the method gives back may hold the object)
    bound: Any = located(gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None))
    if giving:  # (the object first, then the user's target: name, y = ...; y = name's own result where y is name)
        bound = located(gast.Tuple(elts=[bound, stmt.targets[0]], ctx=gast.Store()))
    rewritten = gast.copy_location(gast.Assign(targets=[bound], value=changed, type_comment=None), stmt)
    setattr(rewritten, ORIGINAL, stmt)
    return rewritten


def _not_private(function: gast.FunctionDef, name: str) -> Optional[str]:
    """Why another part of the program may see the object ``name`` holds, so a store into it is not a new
    binding of ``name`` alone; None where only ``name`` holds it (see the module docstring)."""
    args = function.args
    params = [a.id for a in [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs]
              if isinstance(a, gast.Name)]
    private_self = getattr(function, PRIVATE_SELF, None) == name
    if name in params and not private_self:
        why = f"{name} is a parameter: the store would change the caller's object, which s2s_ad does not do"
        if name == params[0] and name == "self":  # (a method changing its object, called where s2s_ad cannot follow it)
            why += (" (a method changing its object is followed where it is called in a statement of its own, "
                    "obj.step(dt) or y = obj.step(dt), on an object the function made by calling its class and "
                    "holds by that name alone)")
        return why
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
                        if target is not bound or not isinstance(node.value, gast.Call) or node not in own \
                                or private_self:  # (a method's self bound again: the caller's object is not)
                            return f"{name} is bound otherwise than by name = <a call> (line {node.lineno})"
                        stored.add(bound)
    for node in gast.walk(function):
        if isinstance(node, gast.Name) and node.id == name and node not in read_as_attribute \
                and node not in stored and not getattr(node, GIVEN_BACK, False) \
                and not (private_self and node is _first_parameter(function)):
            return (f"{name} is used otherwise than by its attributes (line {getattr(node, 'lineno', '?')}: passed "
                    "on, held by a container or another name, returned, or bound by a loop), so another name may "
                    "hold the same object")
    return None


def _first_parameter(function: gast.FunctionDef) -> Any:
    return function.args.args[0] if function.args.args else None
