"""What a block of the user's code binds and reads: scans of its gast nodes, for lowering.

Input: gast nodes of a function body (after ``subset.py``'s check, before or after
``desugar.py``).  Output: sets and counts of the user's names (never IR): the names a block
assigns, the defs it binds, the names it writes into in place, every read of a name.  The
scans change nothing; a def's own name is bound in the enclosing block, not inside it.
"""
from __future__ import annotations

from typing import Any, Iterator

import gast

from ..core.identity import IdentitySet
from ..core.nodes import all_nodes
from ..frontend.list_sharing import stores_into_a_list


def stored_names(node: Any) -> set[str]:
    """User names assigned anywhere inside ``node`` (loop targets, appended lists, lists written into
    by item and the names of nested defs included; a def ``node`` itself does not bind its own name inside)."""
    return stored_among(all_nodes(node))


def stored_among(nodes: list) -> set[str]:
    """``stored_names`` of a tree given as the list of its nodes."""
    names = {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    names |= {n.name for n in nodes[1:] if isinstance(n, gast.FunctionDef)}
    names |= {n.value.id for n in nodes if isinstance(n, gast.Subscript) and stores_into_a_list(n)}  # a new list
    return names | {n.value.func.value.id for n in nodes if is_append(n)}


def binders(stmts: list) -> tuple[dict[str, list], set[str]]:
    """The defs among ``stmts`` and the blocks they hold, by name (not inside nested defs, whose
    names are their own), and the names also assigned a value there: one walk for every name."""
    defs: dict[str, list] = {}
    assigned: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, gast.FunctionDef):
            defs.setdefault(stmt.name, []).append(stmt)
            continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            for block in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
                inner, more = binders(block or [])
                for name, found in inner.items():
                    defs.setdefault(name, []).extend(found)
                assigned |= more
            own = [stmt.test] if not isinstance(stmt, gast.For) else [stmt.target, stmt.iter]
        else:
            own = [stmt]
        assigned.update(n for part in own for n in stored_names(part))
    return defs, assigned


def updated_in_place(stmts: list) -> set[str]:
    """The user names ``stmts`` write into (``v *= x``, ``v[i] = y``, ``v[i] += y``): only a view
    written through in a loop needs to be carried as that view (at the loop's join); one merely
    rebound there (``h = np.tanh(h)``) is a value like any other."""
    names = set()
    for node in (n for stmt in stmts for n in all_nodes(stmt)):
        targets = node.targets if isinstance(node, gast.Assign) else [node.target] \
            if isinstance(node, gast.AugAssign) else []
        for target in targets:
            if isinstance(target, gast.Name) and isinstance(node, gast.AugAssign):
                names.add(target.id)
            elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                names.add(target.value.id)
    return names


def names_read(node: Any) -> Iterator[str]:
    """Every read of a user name inside ``node``, with repeats; ``a += b`` reads ``a`` too."""
    return reads_among(all_nodes(node))


def reads_among(nodes: list) -> Iterator[str]:
    """``names_read`` of a tree given as the list of its nodes."""
    for n in nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            yield n.id
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            yield n.target.id


def is_append(node: Any) -> bool:
    """``name.append(value)`` as a statement."""
    return (isinstance(node, gast.Expr) and isinstance(node.value, gast.Call)
            and isinstance(node.value.func, gast.Attribute) and node.value.func.attr == "append"
            and isinstance(node.value.func.value, gast.Name) and len(node.value.args) == 1
            and not node.value.keywords)


def only_updated_in_place(name: str, nodes: list) -> bool:
    """Whether ``nodes`` (a loop's, all of them) bind ``name`` only as the target of ``name op= v``:
    no assignment, ``for`` target, append, def or ``del`` of it, and no nested def or lambda that
    mentions it (its names are its own)."""
    updated = IdentitySet(n.target for n in nodes if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name))
    nested = IdentitySet(m for n in nodes if isinstance(n, (gast.FunctionDef, gast.Lambda)) for m in all_nodes(n))
    binds = [n for n in nodes if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, (gast.Store, gast.Del))]
    if not binds or any(n in nested for n in nodes if isinstance(n, gast.Name) and n.id == name):
        return False
    defined = any(isinstance(n, gast.FunctionDef) and n.name == name for n in nodes)
    appended = any(is_append(n) and n.value.func.value.id == name for n in nodes)
    return not defined and not appended and all(n in updated for n in binds)
