"""Control flow while lowering (stage 2, lower): blocks, ``if`` statements and loops.

A part of ``lower.Lowering``, the driver, which hands it each ``if``, ``for`` and ``while`` (and the
function's body, a block).  Input: the statement's gast node, the scope being lowered.  Output, in
``LoweringState.block``: an ``ir.If`` of the two branches lowered into blocks of their own (only the
branch a test known while lowering chooses, its statements in the enclosing block), an ``ir.For``
over what ``lower_loops`` says the loop walks (a loop over a container unrolled instead), an
``ir.While`` with its test's block; the merge variables at the joins come from ``lower_joins``, and
the views the loop's writes make stale are marked for its body (``lower_writes.views_written_in``).
Statements within are lowered by the driver (``Lowerer.statement``, ``Lowerer.bind``).
"""
from __future__ import annotations

from typing import Any, Callable

import gast
from ..core import ir, language, runtime
from ..core.identity import Identity
from ..memory.aliasing import Chosen
from .lower_joins import JoinLowering
from .lower_loops import LoopIteration
from .lower_ssa import SSABuilder
from .lower_state import LoweringState, Part
from .lower_writes import WriteLowering


class ControlFlowLowering(Part):
    """Lowers blocks, ifs, for and while loops; each statement within through the driver."""

    def __init__(self, state: LoweringState, ssa: SSABuilder, joins: JoinLowering, loops: LoopIteration,
                 writes: WriteLowering) -> None:
        super().__init__(state)
        self.ssa = ssa
        self.joins = joins
        self.loops = loops
        self.writes = writes

    def lower_block(self, stmts: list) -> list[ir.Stmt]:
        """The statements ``stmts`` lowered into a new block (up to a raise that always runs)."""
        with self.state.new_block() as block:
            self.lower_statements(stmts)
        return block

    def lower_statements(self, stmts: list) -> None:
        """Lower ``stmts`` into the current block, up to a raise that always runs."""
        for stmt in stmts:
            self.state.line = stmt.lineno
            self.state.host.statement(stmt)
            if self.scope.raised:
                break

    def if_statement(self, stmt: gast.If) -> None:
        test = self.ssa.flatten(self.state.converter.convert(stmt.test))
        if isinstance(test, ir.Const) and (language.is_truth_value(test.value) or isinstance(test.value, (str, type(None)))):
            # Known while lowering ("key" in params, config.kind == "tanh"): only that branch exists,
            # and the other may read items the container does not have.
            self.lower_statements(stmt.body if test.value else stmt.orelse)
            return
        joined = self.joins.joined(stmt)
        before = dict(self.scope.env)
        body = self.lower_block(stmt.body)
        body_raised, self.scope.raised = self.scope.raised, False
        after_body, self.scope.env = self.scope.env, dict(before)
        orelse = self.lower_block(stmt.orelse)
        after_else = self.scope.env
        raised = (body_raised, self.scope.raised)
        self.scope.raised = body_raised and self.scope.raised  # (a path that raises binds nothing that is read)
        self.scope.env = self.joins.join_branches(stmt, joined, before, [(body, after_body), (orelse, after_else)],
                                                  raised)
        self.state.block.append(ir.If(test, body, orelse, stmt.lineno))
        for user_name, merged in self.scope.env.items():  # a view chosen by the test, to choose again after a write
            paths = (after_body.get(user_name), after_else.get(user_name))
            if isinstance(merged, ir.Var) and merged not in paths and all(isinstance(p, ir.Var) for p in paths) \
                    and merged.name in self.writes.views.root:
                self.writes.views.made[merged.name] = Chosen(test, paths)

    def _loop_body(self, loop: Any, targets: dict[str, Any], prologue: Callable[[], None]) -> tuple[list, Any]:
        """Lower a loop body; returns it with the merge copies, and the exit flag."""
        exit_test, stmts = None, loop.body
        if stmts and isinstance(stmts[-1], gast.If) and isinstance(stmts[-1].body[0], gast.Break):
            exit_test, stmts = stmts[-1].test, stmts[:-1]
        self.state.runtime_loops.append((Identity(self.scope), frozenset(self.scope.env)))
        try:
            with self.state.new_block() as body:
                prologue()
                self.lower_statements(stmts)
        finally:
            self.state.runtime_loops.pop()
        self.joins.check_carried_views(targets)
        self.joins.carry_returned(loop, targets, self.scope.env)
        self.joins.merge_into(body, self.scope.env, targets, self.state.line)
        exit_flag = None
        if exit_test is not None:
            exit_flag = ir.Var(targets[exit_test.id]) if exit_test.id in targets else self.scope.env[exit_test.id]
        return body, exit_flag

    def for_loop(self, stmt: gast.For) -> None:
        line = stmt.lineno
        checkpoint = self.loops.checkpoint(stmt)
        elements = None if checkpoint is not None else self.loops.static_elements(stmt)
        if elements is not None:  # over a container: unrolled, each item with its own shape and structure
            for element in elements:
                self.state.host.bind(stmt.target, element)
                self.lower_statements(stmt.body)
                if self.scope.raised:
                    return
            return
        iterable, element = self.loops.iteration(stmt)
        targets = self.joins.carry(stmt)
        before = dict(self.scope.env)
        index_user = stmt.target.id if element is None else None
        index = self.state.names.fresh(index_user or "k")
        if index_user:
            self.state.user_names.add(index)

        def prologue() -> None:
            if index_user is not None:  # range: the loop's own index
                self.scope.env[index_user] = ir.Var(index)
                self.writes.views.integers.add(index)
            elif element is not None:  # for row in B: the index walks range(len(B)), so row = B[k] is a row
                self.writes.views.integers.add(index)
                self.state.host.bind(stmt.target, element(ir.Var(index)))

        stale = self.writes.views_written_in(stmt)
        runs = self.loops.surely_runs(stmt)
        body, exit_flag = self._loop_body(stmt, targets, prologue)
        self.scope.raised = False  # (the loop may run no iteration)
        self.writes.views.stale -= stale
        self.scope.env = self.joins.after_loop(before, targets, self.scope.env if runs else None)
        if checkpoint is not None:
            self.loops.check_checkpointed(stmt, body, exit_flag)
        self.state.block.append(ir.For(index, iterable, body, line, exit_flag, checkpoint=checkpoint))

    def while_loop(self, stmt: gast.While) -> None:
        targets = self.joins.carry(stmt)
        before = dict(self.scope.env)
        fixed_point = self.loops.fixed_point_test(stmt)
        checkpointed = self.loops.while_checkpoint(stmt)
        checkpoint = None
        with self.state.new_block() as test_block:
            test = self.ssa.flatten(self.state.converter.convert(
                fixed_point or (checkpointed[0] if checkpointed else stmt.test)))
        if checkpointed is not None:
            checkpoint = self.ssa.flatten(ir.Call(runtime.snapshots, (self.ssa.flatten(
                self.state.converter.convert(checkpointed[1])),)))
        stale = self.writes.views_written_in(stmt)
        body, exit_flag = self._loop_body(stmt, targets, lambda: None)
        self.scope.raised = False  # (the loop may run no iteration)
        self.writes.views.stale -= stale
        self.scope.env = self.joins.after_loop(before, targets)
        if fixed_point is not None:
            self.loops.check_fixed_point(stmt, body, exit_flag)
        if checkpoint is not None:
            self.loops.check_checkpointed(stmt, body, exit_flag)
        self.state.block.append(ir.While(test_block, test, body, stmt.lineno, exit_flag, fixed_point is not None,
                                         checkpoint))
