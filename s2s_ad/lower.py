"""Stage 2: gast → SSA three-address IR.

Input: a ``ParsedFunction`` (its body already checked against the subset).
Output: an ``ir.Function`` satisfying the SSA invariants of ``ir.py``: one
operation per statement, every value named once, constants inline, names
derived from the user's (``a``, ``a_1`` for a reassigned ``a``, ``x_sq`` for
``x ** 2``, ``sin_x`` for ``np.sin(x)``).  Plain copies (``a = x``) and
constant assignments do not become statements: later reads use the copied
value directly.

Expressions are first converted to IR trees by ``expressions.py``; this
module flattens them, and turns statements (assignments, ``if``, loops,
stores into arrays, calls of nested functions) into SSA statements.
``naming.py`` chooses the names.
"""
from __future__ import annotations

import copy
import operator
from collections import Counter
from typing import Any, Callable, Iterator, Optional

import gast
import numpy as np

from . import ir, rules, runtime
from .aliasing import VIEWING, Views
from .desugar import desugar
from .errors import TransformError
from .expressions import BINARY_OPERATORS, Choice, ExpressionConverter, Inline, Known, Nested, Once
from .naming import Names, describe
from .nodes import all_nodes
from .parse import ParsedFunction, is_generated

# Pure operations an expression may repeat (``temp[t] + a * (outside[t] - temp[t])``): the second
# one reuses the first's value, so the forward sweep reads once and the reverse sweep adds once.
_REUSABLE = frozenset({
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow,
    operator.matmul, operator.neg, operator.pos, operator.getitem, operator.lt, operator.le, operator.gt,
    operator.ge, operator.eq, operator.ne,
})


def _stored_names(node: Any) -> set[str]:
    """User names assigned anywhere inside ``node`` (loop targets and appended lists included)."""
    return _stored_among(all_nodes(node))


def _stored_among(nodes: list) -> set[str]:
    """``_stored_names`` of a tree given as the list of its nodes."""
    names = {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return names | {n.value.func.value.id for n in nodes if _is_append(n)}


def _names_read(node: Any) -> Iterator[str]:
    """Every read of a user name inside ``node``, with repeats; ``a += b`` reads ``a`` too."""
    return _reads_among(all_nodes(node))


def _reads_among(nodes: list) -> Iterator[str]:
    """``_names_read`` of a tree given as the list of its nodes."""
    for n in nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            yield n.id
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            yield n.target.id


def _is_append(node: Any) -> bool:
    """``name.append(value)`` as a statement."""
    return (isinstance(node, gast.Expr) and isinstance(node.value, gast.Call)
            and isinstance(node.value.func, gast.Attribute) and node.value.func.attr == "append"
            and isinstance(node.value.func.value, gast.Name) and len(node.value.args) == 1
            and not node.value.keywords)


def _is_add_at(fn: Any) -> bool:
    """``fn`` is ``np.add.at`` (a bound method: a new object at each attribute read)."""
    return getattr(fn, "__self__", None) is np.add and getattr(fn, "__name__", None) == "at"


class Lowering:
    """Flattens one function body into SSA statements, block by block."""

    def __init__(self, parsed: ParsedFunction) -> None:
        self.parsed = parsed
        self.names = Names(set())
        self.user_names: set[str] = set()
        self.buffers: set[str] = set()  # arrays this function created: the only ones it may write into
        self.maybe_numbers: set[str] = set()  # buffers that may be numbers (np.exp(x)): += rebinds them
        self.inlining: set[str] = set()  # nested functions being inlined (to refuse recursion)
        self.env: dict[str, Any] = {}
        self.block: list[ir.Stmt] = []
        self.line: Optional[int] = None
        # Code s2s_ad generated reads an element after a write only where it proved the element
        # is one number (reverse.py knows ranks this stage does not): it is not checked again.
        self.generated = is_generated(parsed.filename)
        self.views = Views(self.buffers, enabled=not self.generated)
        # values that may be views of another array (x[1:], x.T): the array, integer index parts, a slice or not
        self.view_values: dict[str, tuple[str, int, bool]] = {}
        self.merged_from: dict[str, str] = {}  # merge variables that may be an array another name holds
        self.in_place: list[ir.InPlace] = []
        self.element_reads: list[ir.ElementRead] = []  # see ir.Function.element_reads
        self.element_index: dict[str, tuple] = {}  # a[i, j] by atoms only: the index's parts
        self.params: dict[str, str] = {}  # SSA name of each parameter -> the user's name
        # Values already computed in this statement, by block: (id(block), operation) -> the atom.
        # Forgotten at each statement and each store, so a reused value is never stale.
        self.computed: dict[tuple, ir.Var] = {}
        self.converter = ExpressionConverter(self.read, parsed.resolver, parsed.error)
        node, nodes = parsed.node, parsed.nodes  # the nodes as parsed: no walk of the tree needed
        rewritten = desugar(node, {n.id for n in nodes if isinstance(n, gast.Name)} | set(parsed.params),
                            Counter(type(n) for n in nodes))
        self.reads = Counter(_names_read(node) if rewritten else _reads_among(nodes))

    def run(self) -> ir.Function:
        node = self.parsed.node
        params = []
        for p in self.parsed.params:
            name = self.names.claim(p)
            self.env[p] = ir.Var(name)
            self.user_names.add(name)
            params.append(name)
        self.params = dict(zip(params, self.parsed.params))
        body = self.lower_block(node.body)
        docstring = gast.get_docstring(node) if hasattr(gast, "get_docstring") else None
        return ir.Function(node.name, params, body, self.parsed.filename, node.lineno, docstring,
                           in_place=self.in_place, element_reads=self.element_reads)

    def _shared(self, name: str, value: str, stmt: Any) -> Optional[ir.InPlace]:
        """An ``InPlace`` record if ``value`` (what ``name`` holds) may be an object other names see."""
        at = dict(line=stmt.lineno, column=stmt.col_offset + 1)
        if value in self.params:
            return ir.InPlace(value, name, f"the argument {self.params[value]}", **at)
        others = sorted(k for k, v in self.env.items() if k != name and v == ir.Var(value))
        if others:
            return ir.InPlace(value, name, f"the same object as {others[0]}", **at)
        if value in self.merged_from:
            return ir.InPlace(value, name, f"the same object as {self.merged_from[value]} on some paths", **at)
        if value in self.view_values:
            base, integers, keeps = self.view_values[value]
            return ir.InPlace(value, name, f"a view of {base}", base=base, integers=integers, keeps_dimension=keeps,
                              **at)
        return None

    def _note_view(self, name: str, value: Any) -> None:
        """Remember that ``name`` may view another array (for ``_shared``)."""
        if not (isinstance(value, ir.Call) and value.fn in VIEWING and value.fn is not runtime.list_append
                and value.args and isinstance(value.args[0], ir.Var)):
            return
        base = value.args[0].name
        if value.fn is not operator.getitem:
            self.view_values[name] = (base, 0, True)
            return
        parts = value.args[1].items if isinstance(value.args[1], ir.Display) else (value.args[1],)
        keeps = any(isinstance(p, ir.Slice) or (isinstance(p, ir.Const) and p.value in (None, Ellipsis))
                    for p in parts)
        self.view_values[name] = (base, len(parts), keeps)
        if not keeps and all(isinstance(p, (ir.Var, ir.Const)) for p in parts):
            self.element_index[name] = tuple(parts)  # maybe one element: see read

    def read(self, name: str) -> Optional[ir.Expr]:
        """What the user's local ``name`` holds now (``None`` if it is not a local)."""
        value = self.env.get(name)
        if isinstance(value, ir.Var):
            array = self.views.outdated(value.name)
            if array is not None:
                hint = (f"{name} may be a view of {array} (a slice, a row, .T, a reshape, or a list holding it), "
                        f"and NumPy would show the new values through it; copy it where you take it (.copy()), "
                        f"or use float(...) for one number")
                index = self.element_index.get(value.name)
                if index is None or self.view_values[value.name][0] != array:
                    raise TransformError(f"reading {name} after {array} was written", hint,
                                         filename=self.parsed.filename, line=self.line)
                # first = out[0]: one number if out is 1-d and 0 a number, which only the kinds tell
                self.element_reads.append(ir.ElementRead(array, name, index, self.line, hint))
        return value

    def lower_block(self, stmts: list) -> list[ir.Stmt]:
        outer, self.block = self.block, []
        for stmt in stmts:
            self.line = stmt.lineno
            self.statement(stmt)
        inner, self.block = self.block, outer
        return inner

    def statement(self, stmt: Any) -> None:
        self.computed.clear()
        if isinstance(stmt, gast.Assign):
            value = self.converter.convert(stmt.value)
            for target in stmt.targets:
                self.bind(target, value)
        elif isinstance(stmt, gast.AugAssign):
            op = BINARY_OPERATORS[type(stmt.op)]
            current = self.converter.convert(stmt.target)
            value = ir.Call(op, (current, self.converter.convert(stmt.value)))
            if isinstance(stmt.target, gast.Name) and isinstance(current, ir.Var):
                if current.name in self.buffers and current.name not in self.maybe_numbers:
                    # out += x changes the array itself, as NumPy does
                    self.block.append(ir.Store(current.name, ir.Const(Ellipsis), self.flatten(value), self.line))
                    self.computed.clear()
                    self.views.wrote(current.name)
                    return
                if current.name in self.views.root:
                    raise self.parsed.error(f"an in-place update of {stmt.target.id}", f"{stmt.target.id} may be a "
                                            f"view of {self.views.root[current.name]}; write into that array by index "
                                            "instead", stmt)
                update = self._shared(stmt.target.id, current.name, stmt)
                if update is not None:
                    self.in_place.append(update)
            self.bind(stmt.target, value)
        elif _is_append(stmt):  # lists grow by a pure append: items = items + [item]
            call = stmt.value
            items = self.converter.convert(call.func.value)
            self.bind(gast.Name(id=call.func.value.id, ctx=gast.Store(), annotation=None, type_comment=None),
                      ir.Call(runtime.list_append, (items, self.converter.convert(call.args[0]))))
        elif isinstance(stmt, gast.Return):
            self.ret(stmt)
        elif isinstance(stmt, gast.If):
            self.if_statement(stmt)
        elif isinstance(stmt, gast.For):
            self.for_loop(stmt)
        elif isinstance(stmt, gast.While):
            self.while_loop(stmt)
        elif isinstance(stmt, gast.FunctionDef):
            self.env[stmt.name] = Nested(stmt)
        elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
            if self.generated and self._adds_at(stmt.value):  # an adjoint's np.add.at(d_a, index, part)
                call = stmt.value
                update = ir.Call(runtime.added_at, tuple(self.converter.convert(a) for a in call.args))
                self.bind(gast.Name(id=call.args[0].id, ctx=gast.Store(), annotation=None, type_comment=None),
                          update)
                return
            self.effect(self.converter.effect(stmt.value))
        elif isinstance(stmt, gast.Assert):
            message = ir.Const(None) if stmt.msg is None else self.converter.convert(stmt.msg)
            self.effect(ir.Call(runtime.check_assertion, (self.converter.convert(stmt.test), message)))
        # Pass and the docstring need nothing.

    # -- joins -------------------------------------------------------------

    def _joined(self, node: Any) -> list[str]:
        """User names assigned inside ``node`` whose value matters outside it: bound before it,
        or read outside it.  (One walk of ``node``, whatever the number of names.)"""
        nodes = all_nodes(node)
        inside = Counter(_reads_among(nodes))
        return sorted(v for v in _stored_among(nodes) if v in self.env or self.reads[v] > inside[v])

    def _merge_into(self, block: list[ir.Stmt], env: dict, targets: dict[str, str], line: Optional[int]) -> None:
        """Append the merge copies ``merged = value`` for ``targets``, as one parallel assignment.

        At the end of a loop body a value may read another merge variable
        (``a, b = b * 2, a``; a display ``(s, tape)``): every copy must see the
        values from before any of them.  So displays of variables, and values
        that read another target, are bound to a name of their own first.
        """
        merged_names = set(targets.values())
        copies = []
        for user_name, merged in targets.items():
            value = env.get(user_name, ir.Const(None))
            if isinstance(value, ir.Var):  # an array another name holds, joined into this one
                holders = sorted(k for k, v in env.items() if k != user_name and v == value)
                if holders or value.name in self.merged_from:
                    self.merged_from[merged] = holders[0] if holders else self.merged_from[value.name]
            reads_targets = set(ir.names_read(value)) & (merged_names - {merged})
            if (isinstance(value, ir.Display) and any(True for _ in ir.names_read(value))) or reads_targets:
                name = self.names.fresh("items" if isinstance(value, ir.Display) else f"{user_name}_next")
                block.append(ir.Assign(name, value, line))
                value = ir.Var(name)
            copies.append((merged, value))
        for merged, value in copies:
            if not (isinstance(value, ir.Var) and value.name == merged):
                block.append(ir.Assign(merged, value, line, merge=True))

    def if_statement(self, stmt: gast.If) -> None:
        test = self.flatten(self.converter.convert(stmt.test))
        joined = self._joined(stmt)
        before = dict(self.env)
        body = self.lower_block(stmt.body)
        after_body, self.env = self.env, dict(before)
        orelse = self.lower_block(stmt.orelse)
        after_else = self.env
        targets = {v: self.names.fresh(v) for v in joined}
        self._merge_into(body, {**before, **after_body}, targets, stmt.lineno)
        self._merge_into(orelse, {**before, **after_else}, targets, stmt.lineno)
        self.env = {**before, **{v: ir.Var(m) for v, m in targets.items()}}
        self.block.append(ir.If(test, body, orelse, stmt.lineno))

    def _carry(self, node: Any) -> dict[str, str]:
        """Give each loop-carried user name its merge variable, initialised before the loop."""
        targets = {v: self.names.fresh(v) for v in self._joined(node)}
        self._merge_into(self.block, self.env, targets, node.lineno)
        self.env.update({v: ir.Var(m) for v, m in targets.items()})
        return targets

    def _loop_body(self, stmts: list, targets: dict[str, str], prologue: Callable[[], None]) -> tuple[list, Any]:
        """Lower a loop body; returns it with the merge copies, and the exit flag."""
        exit_test = None
        if stmts and isinstance(stmts[-1], gast.If) and isinstance(stmts[-1].body[0], gast.Break):
            exit_test, stmts = stmts[-1].test, stmts[:-1]
        outer, self.block = self.block, []
        prologue()
        for stmt in stmts:
            self.line = stmt.lineno
            self.statement(stmt)
        body, self.block = self.block, outer
        self._merge_into(body, self.env, targets, self.line)
        exit_flag = None
        if exit_test is not None:
            exit_flag = ir.Var(targets[exit_test.id]) if exit_test.id in targets else self.env[exit_test.id]
        return body, exit_flag

    def for_loop(self, stmt: gast.For) -> None:
        line = stmt.lineno
        checkpoint = self._checkpoint(stmt)
        iterable, element = self._iteration(stmt)
        targets = self._carry(stmt)
        before = dict(self.env)
        index_user = stmt.target.id if element is None else None
        index = self.names.fresh(index_user or "k")
        if index_user:
            self.user_names.add(index)

        def prologue() -> None:
            if element is None:
                self.env[index_user] = ir.Var(index)
            else:
                self.bind(stmt.target, element(ir.Var(index)))

        stale = self._views_written_in(stmt)
        body, exit_flag = self._loop_body(stmt.body, targets, prologue)
        self.views.stale -= stale
        self.env = {**before, **{v: ir.Var(m) for v, m in targets.items()}}
        if checkpoint is not None:
            self._check_checkpointed(stmt, body, exit_flag)
        self.block.append(ir.For(index, iterable, body, line, exit_flag, checkpoint=checkpoint))

    def _checkpoint(self, stmt: gast.For) -> Optional[ir.Expr]:
        """For ``for t in checkpointed(steps, every=k)``: unwrap the iterable, return ``k``."""
        it = stmt.iter
        if not (isinstance(it, gast.Call) and self.converter.static(it.func) == (True, runtime.checkpointed)):
            return None
        every = [a for a in it.args[1:]] + [k.value for k in it.keywords if k.arg == "every"]
        if not it.args or len(every) > 1 or any(k.arg != "every" for k in it.keywords):
            raise self.parsed.error("this use of checkpointed", "write checkpointed(steps) or "
                                    "checkpointed(steps, every=k)", it)
        stmt.iter = it.args[0]
        return self.flatten(self.converter.convert(every[0])) if every else ir.Const(None)

    def _check_checkpointed(self, stmt: gast.For, body: list[ir.Stmt], exit_flag: Any) -> None:
        if exit_flag is not None:
            raise self.parsed.error("a checkpointed loop that can stop early", "checkpointing needs the trip "
                                    "count in advance: drop break/return from the loop, or checkpointed", stmt)
        if any(isinstance(s, ir.Store) for s in ir.walk(body)):
            raise self.parsed.error("a checkpointed loop that writes into an array", "a segment run again "
                                    "would see the later values; carry the values in variables, or drop "
                                    "checkpointed", stmt)
        if any(isinstance(s, ir.Effect) for s in ir.walk(body)):
            raise self.parsed.error("print, assert, logging or warnings in a checkpointed loop", "the reverse "
                                    "sweep runs each segment again, which would repeat them; move them out of "
                                    "the loop, or drop checkpointed", stmt)

    def while_loop(self, stmt: gast.While) -> None:
        targets = self._carry(stmt)
        before = dict(self.env)
        outer, self.block = self.block, []
        test = self.flatten(self.converter.convert(stmt.test))
        test_block, self.block = self.block, outer
        stale = self._views_written_in(stmt)
        body, exit_flag = self._loop_body(stmt.body, targets, lambda: None)
        self.views.stale -= stale
        self.env = {**before, **{v: ir.Var(m) for v, m in targets.items()}}
        self.block.append(ir.While(test_block, test, body, stmt.lineno, exit_flag))

    def _views_written_in(self, loop: Any) -> set[str]:
        """Mark views bound before ``loop`` of arrays it writes into: a second iteration would read them
        after a write.  Returns the names marked (the caller unmarks them after the loop)."""
        written = set()
        for node in all_nodes(loop):
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) and isinstance(node.value, gast.Name):
                written.add(node.value.id)
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                written.add(node.target.id)
        roots = {self.views.root_of(self.env.get(name)) for name in written} - {None}
        marked = {name for name, root in self.views.root.items() if root in roots} - self.views.stale
        self.views.stale |= marked
        return marked

    def _iteration(self, stmt: gast.For) -> tuple[ir.Expr, Optional[Callable[[ir.Expr], ir.Expr]]]:
        """The range a ``for`` walks, and how to get the element from the index.

        ``range`` loops iterate their own index; sequences, ``enumerate``,
        ``zip`` and ``reversed`` become loops over an index range.
        """
        it, target = stmt.iter, stmt.target
        kind, args = self._iteration_call(it)
        if kind is range:
            if not isinstance(target, gast.Name):
                raise self.parsed.error("unpacking a range element", "loop over range with one name", target)
            return self.flatten(ir.Call(range, tuple(args)), self.names.fresh("steps")), None
        if kind is reversed and isinstance(it.args[0], gast.Call) and self._iteration_call(it.args[0])[0] is range:
            steps = ir.Call(range, tuple(self._iteration_call(it.args[0])[1]))
            backwards = ir.Call(operator.getitem, (steps, ir.Slice(None, None, ir.Const(-1))))
            if not isinstance(target, gast.Name):
                raise self.parsed.error("unpacking a range element", "loop over range with one name", target)
            return self.flatten(backwards, self.names.fresh("steps")), None
        if kind is reversed and not self._iteration_call(it.args[0])[0]:
            seq = self.flatten(args[0])
            last = ir.Call(operator.sub, (ir.Call(len, (seq,)), ir.Const(1)))
            steps = self.flatten(ir.Call(range, (last, ir.Const(-1), ir.Const(-1))), self.names.fresh("steps"))
            return steps, lambda k: ir.Call(operator.getitem, (seq, k))
        length, item = self._sequence(it)
        steps = self.flatten(ir.Call(range, (length,)), self.names.fresh("steps"))
        return steps, item

    def _sequence(self, node: Any) -> tuple[ir.Expr, Callable[[ir.Expr], ir.Expr]]:
        """What a ``for`` walks, as its length and its ``k``-th element; ``enumerate``, ``zip`` and
        ``reversed`` nest (``enumerate(zip(a, b))``).  The sequences are read before the loop."""
        kind, args = self._iteration_call(node)
        if kind is enumerate:
            length, item = self._sequence(node.args[0])
            start = args[1] if len(args) > 1 else ir.Const(0)
            return length, lambda k: ir.Display("tuple", (ir.Call(operator.add, (k, start)) if not ir.is_const(start, 0)
                                                          else k, item(k)))
        if kind is zip:
            parts = [self._sequence(a) for a in node.args]
            length = parts[0][0]
            for other, _ in parts[1:]:
                length = ir.Call(min, (length, other))
            return length, lambda k: ir.Display("tuple", tuple(item(k) for _, item in parts))
        if kind is reversed:
            length, item = self._sequence(node.args[0])
            last = self.flatten(ir.Call(operator.sub, (length, ir.Const(1))))
            return ir.Call(operator.add, (last, ir.Const(1))), lambda k: item(ir.Call(operator.sub, (last, k)))
        seq = self.flatten(self.converter.convert(node))  # range(...) too: a range object is indexed
        return ir.Call(len, (seq,)), lambda k: ir.Call(operator.getitem, (seq, k))

    def _iteration_call(self, it: Any) -> tuple[Any, list]:
        if isinstance(it, gast.Call) and not it.keywords:
            found, fn = self.converter.static(it.func)
            if found and fn in (range, enumerate, zip, reversed):
                return fn, [self.converter.convert(a) for a in it.args]
        return None, []

    # -- assignments -------------------------------------------------------

    def store(self, target: gast.Subscript, value: ir.Expr) -> None:
        """``a[index] = value``: allowed into arrays the function made itself."""
        array = self.env.get(target.value.id)
        name = target.value.id
        if self.generated and isinstance(array, ir.Var):
            self.buffers.add(array.name)  # generated code writes only into adjoints it owns (reverse.py)
        if isinstance(array, ir.Var) and array.name in self.views.root:
            raise self.parsed.error(f"an assignment into {name}[...]", f"{name} may be a view of "
                                    f"{self.views.root[array.name]}; write into that array by index instead", target)
        if not (isinstance(array, ir.Var) and array.name in self.buffers):
            raise self.parsed.error(
                f"an assignment into {name}[...]", f"{name} is not an array this function created (an argument, "
                f"or a view of one), and writing into it would change the caller's data; copy it first: "
                f"{name} = {name}.copy()", target)
        index = self.flatten(self.converter.convert(target.slice))
        self.block.append(ir.Store(array.name, index, self.flatten(value), self.line))
        self.computed.clear()
        self.views.wrote(array.name)

    def bind(self, target: Any, value: ir.Expr) -> None:
        if isinstance(target, gast.Subscript):
            self.store(target, value)
            return
        if isinstance(target, gast.Name):
            if ir.is_atom(value):
                self.env[target.id] = value
                return
            name = self.names.claim(target.id)
            self.user_names.add(name)
            self.env[target.id] = self.flatten(value, name)
            self.views.bound(name, value)
            self._note_view(name, value)
            return
        # Tuple unpacking: a display binds element-wise, anything else by index.
        elements = target.elts
        if isinstance(value, ir.Display) and len(value.items) == len(elements):
            items = [self.flatten(v) for v in value.items]  # evaluate all before binding any
            for element, item in zip(elements, items):
                self.bind(element, item)
            return
        if isinstance(value, ir.Display):
            raise self.parsed.error("an unpacking of the wrong length",
                                    f"{len(value.items)} values into {len(elements)} names", target)
        whole = self.flatten(value)
        for i, element in enumerate(elements):
            self.bind(element, ir.Call(operator.getitem, (whole, ir.Const(i))))
            if isinstance(element, gast.Name):  # an item of a tuple, not a view
                self.view_values.pop(getattr(self.env.get(element.id), "name", None), None)

    def _adds_at(self, call: gast.Call) -> bool:
        """``np.add.at(name, index, value)``: in code s2s_ad generated, a new value of ``name``
        (``runtime.added_at``), so forward mode over it sees an ordinary assignment."""
        return (len(call.args) == 3 and not call.keywords and isinstance(call.args[0], gast.Name)
                and _is_add_at(self.converter.resolve(call.func)))

    def effect(self, call: ir.Call) -> None:
        """A call made for its effect (print, logging, assert): its arguments flattened, the call a
        statement of its own, which the derivative code keeps where the primal computation runs."""
        args = tuple(self.flatten(a) for a in call.args)
        kwargs = tuple((k, self.flatten(v)) for k, v in call.kwargs)
        self.block.append(ir.Effect(ir.Call(call.fn, args, kwargs), self.line))

    def ret(self, stmt: gast.Return) -> None:
        value = self.converter.convert(stmt.value)
        if isinstance(value, ir.Display):  # a tuple result is one value, made by a display
            value = self.materialise(self.flatten(value), "out")
        self.block.append(ir.Return(self.flatten(value, None if ir.is_atom(value) else self.names.fresh("out")),
                                    self.line))

    def materialise(self, display: ir.Display, base: str) -> ir.Var:
        """Bind a tuple or list display to a name (SSA: ``t = (a, b)``)."""
        name = self.names.fresh(base)
        self.block.append(ir.Assign(name, display, self.line))
        return ir.Var(name)

    def flatten(self, expr: Any, name: Optional[str] = None) -> ir.Expr:
        """Emit statements computing ``expr``; return the atom holding it."""
        if ir.is_atom(expr):
            return expr
        if isinstance(expr, Choice):
            return self._choice(expr, name)
        if isinstance(expr, Once):
            if expr.atom is None:
                expr.atom = self.flatten(expr.value)
            return expr.atom
        if isinstance(expr, Inline):
            return self.inline(expr)
        if isinstance(expr, ir.Slice):
            return ir.Slice(*(None if p is None else self.flatten(p) for p in (expr.lower, expr.upper, expr.step)))
        if isinstance(expr, ir.Display):
            return ir.Display(expr.kind, tuple(self.flatten(i) for i in expr.items))
        args = tuple(self.flatten(a) for a in expr.args)
        kwargs = tuple((k, self.flatten(v)) for k, v in expr.kwargs)
        if expr.fn is operator.getitem and isinstance(args[0], ir.Display):
            index = args[1]
            if isinstance(index, ir.Const) and isinstance(index.value, int) and -len(args[0].items) <= index.value < len(args[0].items):
                return args[0].items[index.value]  # (a, b)[0] is a
            args = (self.materialise(args[0], "items"),) + args[1:]
        if expr.fn is len and len(args) == 1 and isinstance(args[0], ir.Display):
            return ir.Const(len(args[0].items))
        call = ir.Call(expr.fn, args, kwargs)
        key = self._reuse_key(call) if name is None else None
        if key in self.computed:
            return self.computed[key]
        target = self.names.fresh(describe(call, self.user_names)) if name is None else name
        self.block.append(ir.Assign(target, call, self.line))
        if rules.makes_fresh_array(expr.fn):
            self.buffers.add(target)
        elif rules.makes_fresh_value(expr.fn, args):  # written into by index only: += rebinds a number
            self.buffers.add(target)
            self.maybe_numbers.add(target)
        if key is not None:
            self.computed[key] = ir.Var(target)
        return ir.Var(target)

    def _reuse_key(self, call: ir.Call) -> Optional[tuple]:
        """What identifies ``call``'s value within this statement and block, if it may be reused."""
        if call.fn not in _REUSABLE or call.kwargs:
            return None
        key = (id(self.block), call.fn, tuple(ir.value_key(a) for a in call.args))
        try:
            hash(key)
        except TypeError:  # an array constant, or a slice
            return None
        return key

    def inline(self, call: Inline) -> ir.Expr:
        """Lower a nested function's body in place of its call, with Python's scoping:
        its parameters and the names it assigns are its own; other names are read
        from the enclosing function as they are at the call."""
        node = call.function.node
        if node.name in self.inlining:
            raise self.parsed.error(f"the recursive nested function {node.name!r}",
                                    "define it at module level to recurse", node)
        params = [a.id for a in node.args.args]
        if len(params) != len(call.args):
            raise self.parsed.error(f"the call of {node.name!r}", f"it takes {len(params)} arguments", node)
        args = [self._passed(a) if isinstance(a, (Nested, Known)) else self.flatten(a) for a in call.args]
        body = copy.deepcopy(node.body)
        function = gast.FunctionDef(name=node.name, args=node.args, body=body, decorator_list=[], returns=None,
                                    type_comment=None)
        own = _stored_names(function) | set(params)
        desugar(function, own | set(self.reads) | self.names.taken)
        scope = dict(call.function.scope) if call.function.scope is not None else {} if call.function.closed \
            else self.env
        inner_env = {k: v for k, v in scope.items() if k not in own}
        inner_env.update(zip(params, args))
        outer_env, outer_reads, self.env = self.env, self.reads, inner_env
        self.computed.clear()  # the nested function's statements may write into arrays
        self.reads = Counter(_names_read(function))
        self.inlining.add(node.name)
        try:
            for stmt in function.body[:-1]:
                self.line = stmt.lineno
                self.statement(stmt)
            result = self.flatten(self.converter.convert(function.body[-1].value))
        finally:
            self.inlining.discard(node.name)
            self.env, self.reads = outer_env, outer_reads
            self.computed.clear()
        return result

    def _passed(self, function: Any) -> Any:
        """A function passed as an argument: a nested def or lambda keeps the names where it is
        passed (the callee cannot rebind them), not those of the callee it is called in."""
        if isinstance(function, Nested) and not function.closed and function.scope is None:
            return Nested(function.node, scope=tuple(self.env.items()))
        return function

    def _choice(self, choice: Choice, name: Optional[str]) -> ir.Expr:
        """A conditional expression (or ``and``/``or``) as an if statement."""
        test = self.flatten(choice.test)
        merged = self.names.fresh(name or "choice")
        branches = []
        for part in (choice.then, choice.orelse):
            outer, self.block = self.block, []
            value = test if part is None else self.flatten(part)
            self.block.append(ir.Assign(merged, value, self.line, merge=True))
            branches.append(self.block)
            self.block = outer
        self.block.append(ir.If(test, branches[0], branches[1], self.line))
        return ir.Var(merged)



def lower(parsed: ParsedFunction) -> ir.Function:
    """Lower a parsed function to SSA form (see the module docstring)."""
    lowering = Lowering(parsed)
    try:
        return lowering.run()
    finally:
        # The converter holds lowering.read, a cycle: without this, the lowering and the whole tree it
        # reaches would wait for the cycle collector (tens of milliseconds for a big function).
        lowering.converter = None


