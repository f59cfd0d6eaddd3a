"""Updates of shared arrays as stores (stage 1c, between parsing and a second lowering: gast → gast).

Input: a ``ParsedFunction`` and the places (line, column) of augmented assignments ``b op= v``
that the argument kinds prove update an array the function made which another name also holds (a
dict, a record, an object, a view, a list, the same array under another name: ``pipeline.lowered``
finds them on a first lowering, where ``b`` might still have been a number).  Output: the same
function with each such statement written as the store NumPy makes, ``b[...] = b op v``; the other
statements, and every node below them, are the parse's own (``ParsedFunction.reported`` names
nodes by identity).  Lowered again, the store changes the one array every name sees
(``lower_writes``), and views of it are taken again where they are read.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any

import gast

from ..core.nodes import all_nodes
from .parse import ParsedFunction

_BLOCKS = ("body", "orelse", "finalbody")
UPDATED_IN_PLACE = "s2s_ad_updated_in_place"  # (the attribute of a store's target that was the user's b op= v)


def updates_as_stores(parsed: ParsedFunction, places: frozenset[tuple[int, int]]) -> ParsedFunction:
    """``parsed`` with ``b op= v`` at each of ``places`` written ``b[...] = b op v``."""
    node = _rebuilt(parsed.node, places)
    return dataclasses.replace(parsed, node=node, nodes=all_nodes(node))


def body_with_stores(node: Any, places: frozenset[tuple[int, int]]) -> Any:
    """A function's node (a helper lowered in place of its call, its body a copy) with ``b op= v`` at
    each of ``places`` (lines and columns of its file) written ``b[...] = b op v``."""
    return _rebuilt(node, places) if places else node


# An update ``b op= v`` to lower as a store: its file, line and column, and where it was lowered: the calls
# inlined around it (each the caller's file, line and the count of calls inlined before it on that
# statement; () in the differentiated function itself).  A helper inlined at two calls is two sites: the
# kinds may prove an array at one and a number at the other.
Store = tuple[str, int, int, tuple]


def places_in(stores: frozenset[Store], filename: str, site: tuple = ()) -> frozenset[tuple[int, int]]:
    """The lines and columns of ``stores`` in ``filename`` lowered at ``site``."""
    return frozenset((line, column) for file, line, column, where in stores if file == filename and where == site)


def _rebuilt(node: Any, places: frozenset[tuple[int, int]]) -> Any:
    """A shallow copy of ``node`` whose statement blocks hold the rewritten statements."""
    changed = copy.copy(node)
    for block in _BLOCKS:
        statements = getattr(node, block, None)
        if isinstance(statements, list):
            setattr(changed, block, [_statement(s, places) for s in statements])
    return changed


def _statement(stmt: Any, places: frozenset[tuple[int, int]]) -> Any:
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name) \
            and (stmt.lineno, stmt.col_offset + 1) in places:
        name = stmt.target.id
        whole = gast.Subscript(value=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
                               slice=gast.Constant(value=Ellipsis, kind=None), ctx=gast.Store())
        setattr(whole, UPDATED_IN_PLACE, True)  # (what a refusal of the store names: the user's update)
        value = gast.BinOp(left=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
                           op=stmt.op, right=stmt.value)
        store = gast.Assign(targets=[whole], value=value, type_comment=None)
        for part in (store, whole, whole.value, whole.slice, value, value.left):
            gast.copy_location(part, stmt)
        return store
    if isinstance(stmt, gast.FunctionDef):  # a nested def's lines are its own, and never among the places
        return stmt
    if any(isinstance(getattr(stmt, b, None), list) for b in _BLOCKS):
        return _rebuilt(stmt, places)
    return stmt
