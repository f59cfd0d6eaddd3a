"""Adjoints of stores into arrays, and of reads from arrays whose adjoint is updated in place.

Input: the SSA function being reversed, its ``Analysis`` and may-alias facts,
the reverse sweep's ledger (``adjoints.Adjoints``) and recorder
(``recording.Recorder``).  Output, appended to the ledger's statements:

* for a store ``a[i] = v`` (``reverse_store``): ``v`` takes the adjoint of the
  slice the store wrote, which then becomes zero; an integer-array index takes
  only the write NumPy kept; where other statements read the array's contents,
  the slice the store overwrote is recorded by the forward sweep and put back
  (``restores``: sid of a primal store -> the store that puts the slice back);
* for a read ``a[i]`` of an array whose adjoint the sweep owns (``scatter``):
  ``d_a[i] += contribution`` in place where the index cannot repeat a
  position, else a scatter-add whose result is added.
"""
from __future__ import annotations

import operator

from ..core import ir, language, runtime
from .adjoints import Adjoints
from ..memory.sharing import Sharing
from ..analysis.facts import Analysis
from ..analysis.inference import SCALAR
from ..core.errors import TransformError
from .recording import Recorder


class StoreAdjoints:
    """The reverse of stores, and the in-place updates of arrays' adjoints."""

    def __init__(self, fn: ir.Function, adjoints: Adjoints, recorder: Recorder, facts: Analysis, sharing: Sharing,
                 unrestored: frozenset) -> None:
        self.fn = fn
        self.adjoints = adjoints
        self.recorder = recorder
        self.facts = facts
        self.sharing = sharing
        self.unrestored = unrestored  # sids of the Stores whose overwritten slice nothing reads again
        self.restores: dict[int, ir.Store] = {}  # sid of a primal Store -> the store that puts the slice back
        stores = [s for s in ir.walk(fn.body) if isinstance(s, ir.Store)]
        self.written = {s.array for s in stores}
        # A written array whose contents other statements read gets its overwritten slices back.
        self.restored_arrays = self.written & self._read_elsewhere(fn.body) if stores else set()

    @staticmethod
    def _read_elsewhere(body: list[ir.Stmt]) -> set[str]:
        """The names statements other than stores read."""
        return {n for s in ir.walk(body) if not isinstance(s, ir.Store)
                for e in ir.exprs_of(s) for n in ir.names_read(e)}

    def reverse_store(self, stmt: ir.Store) -> None:
        """``a[i] = v``: ``v`` takes the adjoint of the slice it wrote, which then becomes zero."""
        array, index, value = stmt.array, stmt.index, stmt.value
        if array in self.adjoints.adjoint and array in self.facts.active:
            self.adjoints.own(array)
            target = ir.Var(self.adjoints.adjoint_name(array))
            if isinstance(value, ir.Var) and value.name in self.facts.active:
                part = ir.Call(operator.getitem, (target, index))
                if not self._single_element(array, index):
                    if self._element_index(index):  # a row or a slice is a view: copy it before it is zeroed
                        part = ir.Call(language.copy, (part,))
                        if self.facts.part_class(array, index) != self.facts.shape.get(value.name):
                            part = ir.Call(runtime.unbroadcast, (part, value))  # the value may have been broadcast
                    else:  # an integer array may name an element twice: only the write NumPy kept counts
                        self._check_overlapping_fancy_store(stmt)
                        part = ir.Call(runtime.stored_part, (target, index, value))
                if array not in self.facts.inexact:  # into integers, NumPy truncates: no derivative
                    part = ir.Call(runtime.if_inexact, (part, ir.Var(array)))
                if self.sharing.adjoint_shared_with_store(value.name, array):
                    # ``b[::-1] = b``: the value's adjoint is the array's, which the store zeroes next:
                    # take the part first, zero the slice, then add the part
                    taken = self.adjoints.fresh(f"d_{value.name}_part")
                    self.adjoints.assign(taken, part)
                    self.adjoints.emit(ir.Store(target.name, index, ir.Const(0.0), self.adjoints.line))
                    self.adjoints.accumulate(value.name, ir.Var(taken))
                else:
                    self.adjoints.accumulate(value.name, part)
                    self.adjoints.emit(ir.Store(target.name, index, ir.Const(0.0), self.adjoints.line))
            else:
                self.adjoints.emit(ir.Store(target.name, index, ir.Const(0.0), self.adjoints.line))
        if array in self.restored_arrays and stmt.sid not in self.unrestored:
            old = self.adjoints.fresh(f"old_{array}")
            slot = self.recorder.declare(f"the store at line {stmt.line}: the part of {array} it overwrites",
                                         (self.recorder.overwritten(stmt),), (old,), stmt.line)
            self.recorder.store_pushes[stmt.sid] = slot
            self.adjoints.emit(ir.Pop(slot, (old,), self.adjoints.line))
            self.restores[stmt.sid] = ir.Store(array, index, ir.Var(old), self.adjoints.line)
            self.adjoints.emit(self.restores[stmt.sid])

    def _check_overlapping_fancy_store(self, stmt: ir.Store) -> None:
        """Refuse ``b[[3, 2, 1, 0]] = b`` (a value that may share memory with the array an integer-array
        index writes) where this NumPy does not copy such a right side first (before 2.0 it writes the
        elements one by one, each read after the writes before it): the adjoint assumes the copy."""
        if runtime.FANCY_STORES_COPY_OVERLAP or not isinstance(stmt.value, ir.Var):
            return
        if stmt.value.name == stmt.array or self.sharing.shares(stmt.value.name, stmt.array):
            raise TransformError(f"the store into {stmt.array} by an integer array of a value that may share its "
                                 f"memory", "this NumPy (before 2.0) writes such a store element by element, "
                                 "reading values it has already overwritten; copy the value first "
                                 f"({stmt.array}[index] = value.copy())", filename=self.fn.filename, line=stmt.line)

    def scatter(self, array: str, index: ir.Expr, contribution: ir.Expr) -> None:
        """``d_array[index] += contribution``: in place where the index cannot repeat a position.

        An integer-array index may read an element twice, and each reading adds
        its part: ``getitem_grad`` scatters with ``np.add.at``, as a call whose
        result is added (generated code stays pure, so higher orders can
        differentiate it again).
        """
        self.adjoints.own(array)
        target = self.adjoints.adjoint_name(array)
        if self._element_index(index):
            self.adjoints.emit(ir.Store(target, index, contribution, self.adjoints.line, op=operator.add))
        else:
            self.adjoints.accumulate(array, ir.Call(runtime.getitem_grad, (contribution, ir.Var(array), index)))

    def basic_index(self, index: ir.Expr) -> bool:
        """True if ``index`` picks single elements or basic slices (no position twice)."""
        return self._element_index(index)

    def _element_index(self, index: ir.Expr) -> bool:
        """True if ``index`` picks single elements or basic slices (no repeats).

        Only a tuple display is a tuple of per-axis indices: a list display
        (``b[[1, 1]]``) is one integer-array index, and may repeat positions.
        """
        parts = ir.index_parts(index)
        for part in parts:
            if isinstance(part, ir.Slice):
                if not all(p is None or self.facts.shape_of(p) == SCALAR for p in (part.lower, part.upper, part.step)):
                    return False
            elif isinstance(part, ir.Const):
                if not (part.value is None or part.value is Ellipsis or isinstance(part.value, int)):
                    return False
            elif self.facts.shape_of(part) != SCALAR:
                return False
        return True

    def _single_element(self, array: str, index: ir.Expr) -> bool:
        """True if ``array[index]`` is provably one number: one integer per dimension of a known rank."""
        parts = ir.index_parts(index)
        return (self.facts.ndim.get(array) == len(parts)
                and all(not isinstance(p, (ir.Slice, ir.Display)) and self.facts.shape_of(p) == SCALAR
                        and not getattr(self.facts.fact(p), "truth", False)  # a[flag] adds an axis
                        and not (isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis))
                        for p in parts))
