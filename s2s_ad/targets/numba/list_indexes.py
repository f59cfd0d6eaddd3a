"""Positions written as a list literal (``b[[3, 1, 3]]``), as an array for Numba.

Input: a function of the Numba target's code.  Output: the same function where a list literal of
integer (or boolean) constants indexes an array (a read, a store, the index of a rule helper that
reads or writes through one: ``getitem_grad``, ``stored_part``, ``write_into``, ``add_into``,
``added_at``), also as one item of a tuple index, is ``np.array([...])`` instead.

Why: NumPy reads a list of integers as an index array (of booleans, as a mask): the two give the
same elements, in the same order, repeats included.  Numba indexes by arrays only (a reflected list
as an index does not type), so the function ran as Python.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Optional

import numpy as np

from ...core import ir, runtime

# the functions reading or writing through an index, and which argument is the index
_INDEX_ARGUMENT = {operator.getitem: 1, runtime.getitem_grad: 2, runtime.stored_part: 1,
                   runtime.write_into: 1, runtime.add_into: 1, runtime.added_at: 1}


def _index_argument(call: ir.Call) -> Optional[int]:
    try:
        return _INDEX_ARGUMENT.get(call.fn)
    except TypeError:  # (a callee that cannot be hashed reads through no index)
        return None


def _positions(e: ir.Expr) -> bool:
    """Whether ``e`` is a list literal of integer or boolean constants (not empty: an empty list of
    positions has no dtype to give)."""
    if not (isinstance(e, ir.Display) and e.kind == "list" and e.items):
        return False
    kinds = {type(item.value) if isinstance(item, ir.Const) else None for item in e.items}
    return kinds in ({int}, {bool})


def _as_array(index: ir.Expr) -> ir.Expr:
    if _positions(index):
        return ir.Call(np.array, (index,))
    if isinstance(index, ir.Display) and index.kind == "tuple" and any(_positions(i) for i in index.items):
        return ir.Display("tuple", tuple(ir.Call(np.array, (i,)) if _positions(i) else i for i in index.items))
    return index


def _lists_in_indexes(fn: ir.Function) -> bool:
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Store) and _as_array(stmt.index) is not stmt.index:
            return True
        for e in ir.exprs_of(stmt):
            for call in ir.calls_in(e):
                where = _index_argument(call)
                if where is not None and len(call.args) > where and _as_array(call.args[where]) is not call.args[where]:
                    return True
    return False


def positions_as_arrays(fn: ir.Function) -> ir.Function:
    """``fn`` with its list literals of positions as arrays (see the module's docstring)."""
    if not _lists_in_indexes(fn):
        return fn

    def rewritten(e: ir.Expr) -> Optional[ir.Expr]:
        if isinstance(e, ir.Call):
            where = _index_argument(e)
            if where is not None and len(e.args) > where:
                index = _as_array(e.args[where])
                if index is not e.args[where]:
                    return dataclasses.replace(e, args=e.args[:where] + (index,) + e.args[where + 1:])
        return None

    body = ir.transformed(fn.body, rewritten)
    return dataclasses.replace(fn, body=_stores_rewritten(body))


def _stores_rewritten(body: list[ir.Stmt]) -> list[ir.Stmt]:
    def rewritten(stmt: ir.Stmt) -> ir.Stmt:
        if isinstance(stmt, ir.Store):
            index = _as_array(stmt.index)
            if index is not stmt.index:
                return dataclasses.replace(stmt, index=index)
        return stmt
    return ir.statements_rebuilt(body, rewritten)
