"""Lists grown or written into while another name holds them: refused before anything runs.

Lowering treats a list as a value: ``items.append(v)`` and ``items += [v]`` bind ``items`` to a new,
longer list, ``items[i] = v`` to a new list with that item replaced.  Python changes the one list
object, so every other holder sees the change: a name bound to it (``b = items``), a tuple, list or
dict holding it, the caller of a helper that changes a list it was given, a loop walking it.  Where
such a holder is read after the change, the value would differ from Python's: a wrong number.  This
check finds every list the function changes and refuses the function where the list may be held
elsewhere at the time, naming the line where another holder took it; and a list changed inside a
loop that walks it (``for v in items``, ``enumerate(items)``), whose later trips Python would give the
changed items.  It marks the changes lowering makes new lists of (``extends_a_list``,
``stores_into_a_list``): those into a name that is a list wherever the function binds it.

Input: a function's gast tree (after ``sugar.py``) and its body without the docstring.  Output:
nothing, or a ``TransformError`` (through ``refuse``) at the first holder of a grown list.

A list changed here (``items.append(v)``, ``items += [...]``, ``items[i] = v``, ``items[i] += v`` where
``items`` is a list) is accepted when every binding of its name makes a new list (a display, a
comprehension, ``list(...)``, ``sorted(...)``, ``a + b``, ``[v] * n``), it is not a parameter (the caller's list), and each read of it
lets no other object hold it: the list grown, an item or slice read, a call of ``len``, ``sum``,
``np.*``, ``math.*`` and the like (which make new objects), an iteration, a test, an arithmetic
operand, ``return``.  Any other read (``b = items``, ``(items, x)``, ``f(items)`` for a user's
function, a closure) is a holder; it is harmless where it comes after the statement of the function's
top level that grows the list last (the list no longer grows then).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import gast

from ..core.errors import TransformError

Refuse = Callable[[str, str, Any], TransformError]

# Builtins that read a list and keep no hold of it (their result is a new object, or a number).
_READERS = frozenset({"len", "sum", "max", "min", "sorted", "tuple", "list", "any", "all", "print", "str", "repr",
                      "float", "int", "isinstance", "abs", "range"})
# Builtins whose result reads the list later, as it is then: harmless only as the loop's iterable.
_LAZY_READERS = frozenset({"enumerate", "zip", "reversed", "iter"})
# Modules whose functions make arrays or numbers of a list they are given.
_MODULES = frozenset({"np", "numpy", "math"})
# List methods that grow nothing and keep no hold: their results are numbers or new lists.
_READING_METHODS = frozenset({"copy", "index", "count"})


# The attribute of an ``items += [...]`` node that ``check_list_sharing`` marks: ``items`` is a list in
# every binding of the function (lowering's fact: a longer list, never a write into an array it holds).
_EXTENDS = "s2s_ad_extends_a_list"
# The attribute of the target ``items[i]`` of a store or an update that ``check_list_sharing`` marks:
# ``items`` is a list in every binding of the function (lowering's fact: a new list, the item replaced).
_INTO_A_LIST = "s2s_ad_into_a_list"


def extends_a_list(update: Any) -> bool:
    """True if the augmented assignment ``update`` (checked by ``check_list_sharing``) makes its list
    longer: its target is a list wherever the function binds it."""
    return bool(getattr(update, _EXTENDS, False))


def stores_into_a_list(target: Any) -> bool:
    """True if ``target``, the ``items[i]`` of a store or an in-place update checked by
    ``check_list_sharing``, is an item of a list: ``items`` is a list wherever the function binds it."""
    return bool(getattr(target, _INTO_A_LIST, False))


def check_list_sharing(function: gast.FunctionDef, body: list, refuse: Refuse) -> None:
    """Refuse ``function`` where a list it grows or writes an item into may be held by another name or
    object (see the module docstring); mark each ``items += [...]`` whose ``items`` is a list wherever
    it is bound (``extends_a_list``), and each ``items[i]`` stored into or updated (``stores_into_a_list``)."""
    parents = _parents(function)
    _mark_list_extensions(function, body, parents)
    grown = _grown_lists(body)
    if not grown:
        return
    _refuse_changes_while_walked(body, grown, refuse)
    params = {a.id for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    last_growth = {name: max(position for position, _ in at) for name, at in grown.items()}
    for position, stmt in enumerate(body):
        for node in gast.walk(stmt):
            if not isinstance(node, gast.Name) or node.id not in grown:
                continue
            name = node.id
            if isinstance(node.ctx, gast.Param) or name in params:
                raise refuse(f"growing the list {name!r}, an argument", "the caller's list would grow too, which "
                             "s2s_ad does not follow; build a new list (items = items + [v]) and return it",
                             grown[name][0][1])
            if isinstance(node.ctx, gast.Store):
                if not _makes_new_list(parents, node) and position <= last_growth[name]:
                    raise refuse(f"{_changing(grown[name][-1][1])} the list {name!r}, bound to a list another "
                                 "name may hold", f"make it a new list where it is bound ({_copied_binding(parents, node)}), "
                                 "or build a new list at each step (items = items + [v])", node)
                continue
            if isinstance(node.ctx, gast.Load) and not _lets_no_one_hold(parents, node) \
                    and position <= last_growth[name]:
                change = grown[name][-1][1]
                how = "an item written" if isinstance(change, gast.Subscript) else "append or +="
                raise refuse(f"the in-place update of {name} (line {change.lineno}: {how}), a "
                             "list that another name or object takes here",
                             "Python changes the one list, so the other holder would see the change, which s2s_ad "
                             "does not follow: let the other take the list once it is complete, or build a "
                             "new list at each step (items = items + [v])", node)


def _refuse_changes_while_walked(body: list, grown: dict[str, list[tuple[int, Any]]], refuse: Refuse) -> None:
    """Refuse a list grown or written into by a loop that walks it (``for v in items``, through
    ``enumerate``, ``zip``, ``reversed`` or ``iter``): Python's loop reads each item when it comes to it,
    so it sees the change, where the lowered loop walks the list as it was when the loop began."""
    for loop in (n for n in _own_scope(body) if isinstance(n, gast.For)):
        inside = {id(n) for stmt in loop.body + loop.orelse for n in gast.walk(stmt)}
        for name in sorted(_walked_lazily(loop.iter) & grown.keys()):
            change = next((node for _, node in grown[name] if id(node) in inside), None)
            if change is not None:
                raise refuse(f"{_changing(change)} the list {name!r} in a loop that walks it", "Python's loop reads "
                             "each item when it comes to it, so it would see the change; loop over "
                             f"range(len({name})) and read {name}[i], or walk a copy (for v in {name}.copy())", change)


def _walked_lazily(iterable: Any) -> set[str]:
    """The names whose list a loop over ``iterable`` reads item by item as it goes: the iterable itself,
    or one given to ``enumerate``, ``zip``, ``reversed`` or ``iter``."""
    if isinstance(iterable, gast.Name):
        return {iterable.id}
    if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) and iterable.func.id in _LAZY_READERS:
        return {name for arg in iterable.args for name in _walked_lazily(arg)}
    return set()


def _grown_lists(body: list) -> dict[str, list[tuple[int, Any]]]:
    """The names of the lists ``body`` grows, each with where: (the top-level statement's position,
    the growing statement)."""
    lists = _list_names(body)
    grown: dict[str, list[tuple[int, Any]]] = {}
    for position, stmt in enumerate(body):
        for node in gast.walk(stmt):
            name = _grows(node, lists)
            if name is not None:
                grown.setdefault(name, []).append((position, node))
    return grown


def _list_names(body: list) -> set[str]:
    """Names some statement binds to a new list (a display or comprehension)."""
    return {target.id for stmt in body for node in gast.walk(stmt) if isinstance(node, gast.Assign)
            and isinstance(node.value, (gast.List, gast.ListComp))
            for target in node.targets if isinstance(target, gast.Name)}


def _grows(node: Any, lists: set[str]) -> Optional[str]:
    """The name of the list the statement ``node`` grows or writes an item into in place, or None."""
    if isinstance(node, gast.Subscript) and stores_into_a_list(node):
        return str(node.value.id)
    if isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
        func = node.value.func
        if isinstance(func, gast.Attribute) and func.attr == "append" and isinstance(func.value, gast.Name):
            return str(func.value.id)
    if (isinstance(node, gast.AugAssign) and isinstance(node.op, gast.Add) and isinstance(node.target, gast.Name)
            and (node.target.id in lists or isinstance(node.value, (gast.List, gast.ListComp)))):
        return str(node.target.id)
    return None


def _changing(change: Any) -> str:
    """How a refusal names the change ``change`` (a node ``_grows`` found) makes to its list."""
    return "writing an item into" if isinstance(change, gast.Subscript) else "growing"


def _parents(tree: Any) -> dict[int, Any]:
    return {id(child): node for node in gast.walk(tree) for child in gast.iter_child_nodes(node)}


def _makes_new_list(parents: dict[int, Any], target: gast.Name) -> bool:
    """True if the binding that stores ``target`` makes a new list: ``target = <new list>``, or the
    list grown in place (``target += [...]``)."""
    stmt = parents.get(id(target))
    if isinstance(stmt, gast.AugAssign):
        return stmt.target is target
    if not (isinstance(stmt, gast.Assign) and target in stmt.targets):
        return False  # unpacked, a loop's index, a comprehension's variable: any object
    if len(stmt.targets) > 1:
        return False  # a = b = []: one list under two names
    value = stmt.value
    if isinstance(value, (gast.List, gast.ListComp)):
        return True
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Mult)):
        return True
    if _a_copy_call(value):
        return True  # (a list's copy is a new list; an array's, an array: no list another name holds)
    if isinstance(value, gast.Call) and _reading_call(value.func) and isinstance(value.func, gast.Attribute):
        return True  # (np.zeros(3), np.asarray(a): an array, or a new list, np.split's: none another name holds)
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and value.func.id in ("list", "sorted"))


def _lets_no_one_hold(parents: dict[int, Any], node: gast.Name) -> bool:
    """True if the read ``node`` of a list lets no other object hold it (see the module docstring)."""
    parent = parents.get(id(node))
    if isinstance(parent, gast.Attribute):
        call = parents.get(id(parent))
        if parent.attr == "append":
            return isinstance(call, gast.Call) and call.func is parent and isinstance(parents.get(id(call)), gast.Expr)
        return parent.attr in _READING_METHODS and isinstance(call, gast.Call) and call.func is parent
    if isinstance(parent, gast.Subscript):
        return parent.value is node
    if isinstance(parent, gast.Call):
        if isinstance(parent.func, gast.Name) and parent.func.id in _LAZY_READERS:
            loop = parents.get(id(parent))
            return node in parent.args and isinstance(loop, (gast.For, gast.comprehension)) and loop.iter is parent
        return node in parent.args and _reading_call(parent.func)
    if isinstance(parent, (gast.For, gast.comprehension)):
        return parent.iter is node
    if isinstance(parent, (gast.Compare, gast.BoolOp, gast.UnaryOp, gast.BinOp, gast.FormattedValue)):
        return True
    if isinstance(parent, (gast.If, gast.While, gast.IfExp)):
        return parent.test is node
    return isinstance(parent, gast.Return)


def _reading_call(func: Any) -> bool:
    if isinstance(func, gast.Name):
        return func.id in _READERS
    while isinstance(func, gast.Attribute):
        func = func.value
    return isinstance(func, gast.Name) and func.id in _MODULES


def _mark_list_extensions(function: gast.FunctionDef, body: list, parents: dict[int, Any]) -> None:
    """Mark the ``items += ...`` of ``body`` (its own scope, nested functions left out) where every
    binding of ``items`` makes a list: a display, a comprehension, ``list(...)``, ``sorted(...)``, ``+``
    with a list, or ``+=`` itself; never a parameter, a loop's index or an unpacked item."""
    own = _own_scope(body)
    updates = [node for node in own if isinstance(node, gast.AugAssign)
               and isinstance(node.target, gast.Name) and isinstance(node.op, gast.Add)]
    # (items[i] = v and items[i] += v of the function's own scope: a nested def's store is its own)
    items = [node for node in own if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store)
             and isinstance(node.value, gast.Name)]
    if not updates and not items:
        return
    params = {a.id for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    stores: dict[str, list[Any]] = {}
    for node in gast.walk(function):  # (every binding of the name, nested scopes' too: one not a list spoils it)
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            stores.setdefault(node.id, []).append(node)
    # (a name some statement binds to a new list: one bound by += alone may be anything, an array)
    lists = {name for name in stores if name not in params and any(
        isinstance(parents.get(id(target)), gast.Assign) for target in stores[name])}
    changed = True
    while changed:
        changed = False
        for name in list(lists):
            if not all(_binds_a_list(parents.get(id(target)), target, lists) for target in stores[name]):
                lists.discard(name)
                changed = True
    for update in updates:
        if update.target.id in lists:
            setattr(update, _EXTENDS, True)
    for item in items:
        if item.value.id in lists:
            setattr(item, _INTO_A_LIST, True)


def _own_scope(body: list) -> list:
    """The nodes of ``body``, without those of the functions and lambdas defined in it."""
    found: list = []
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            stack.extend(reversed(list(gast.iter_child_nodes(node))))
    return found


def _binds_a_list(stmt: Any, target: gast.Name, lists: set[str]) -> bool:
    if isinstance(stmt, gast.AugAssign):
        return stmt.target is target
    if not (isinstance(stmt, gast.Assign) and target in stmt.targets):
        return False
    return _a_list(stmt.value, lists)


def _a_list(value: Any, lists: set[str]) -> bool:
    if isinstance(value, (gast.List, gast.ListComp)):
        return True
    if isinstance(value, gast.Name):
        return value.id in lists
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add):
        return _a_list(value.left, lists) and _a_list(value.right, lists)  # (an array + [v] is an array)
    if _a_copy_call(value):  # items.copy() of a list: a list
        return _a_list(value.func.value, lists)
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult):  # [0.0] * n, n * [0.0]
        # ([0.0] * a of an array a is an array: runtime.list_with writes into a copy of it, as NumPy would)
        return isinstance(value.left, (gast.List, gast.ListComp)) or isinstance(value.right, (gast.List, gast.ListComp))
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id in ("list", "sorted")


def _a_copy_call(value: Any) -> bool:
    """``x.copy()``: a call of a ``copy`` method with no arguments."""
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == "copy" \
        and not value.args and not value.keywords


def _copied_binding(parents: dict[int, Any], target: gast.Name) -> str:
    """The binding of ``target`` written as a copy: ``items = other.copy()`` for ``items = other``."""
    stmt = parents.get(id(target))
    value = stmt.value if isinstance(stmt, gast.Assign) else None
    source = value.id if isinstance(value, gast.Name) else "other"
    return f"{target.id} = {source}.copy()"
