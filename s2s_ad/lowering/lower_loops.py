"""What a for loop walks, while lowering (stage 2, lower).

Input: a ``gast.For`` of the body being lowered.  Output, for a loop run as a
loop: the range of indices it walks (flattened before the loop by
``lower_ssa``) and how the element is read from the index: ``range`` loops
walk their own index; sequences, ``enumerate``, ``zip`` and ``reversed`` (and
their nestings) become loops over an index range, the sequences read before
the loop.  For a loop over a container (or over a display written in the
``for`` itself, ``for w in [A, B]``, or over a tuple of constant strings,
or over ``range(len(ws))`` indexing one): its elements, each with its own
shape and structure, for the driver to unroll.  For
``for t in checkpointed(steps, every=k)``: the iterable unwrapped and the
segment length; and the check that a checkpointed loop can be run again in
segments (no early exit, no store, no effect but a raise).
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Optional

import gast

from ..core import ir, runtime
from ..rules import registry as rules
from ..core.identity import IdentitySet
from .expressions import Record
from .function_values import Functions, function_named, functions_shown
from .lower_scan import is_append
from .lower_ssa import SSABuilder
from .lower_state import LoweringState, Part
from ..core.nodes import all_nodes
from ..frontend.user_classes import is_plain_class


# The most steps a loop over a range of constants that appends functions to a list is unrolled for (each
# step another function: the list is made while transforming); a longer one stays a loop, and is refused.
UNROLLED_APPENDS = 64


def constant_strings(value: Any) -> Optional[list]:
    """The items of a tuple or list of strings known while lowering (``("w", "b")``, or a module-level
    ``NAMES``), each an ``ir.Const``; None for anything else.  A loop over one is unrolled, so that
    ``params[name]`` in its body reads a known key."""
    if isinstance(value, ir.Display):
        items = value.items
    elif isinstance(value, ir.Const) and type(value.value) in (tuple, list):
        items = tuple(ir.Const(v) for v in value.value)
    else:
        return None
    if items and all(isinstance(i, ir.Const) and type(i.value) is str for i in items):
        return list(items)
    return None


def stops_early(stmt: gast.For) -> bool:
    """Whether the loop's body may leave it early (``break``, ``continue``, ``return``; not the return of a
    def or lambda made in it)."""
    nodes = all_nodes(stmt)
    in_defs = IdentitySet(n for d in nodes if isinstance(d, gast.FunctionDef) for n in all_nodes(d)[1:])
    return any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) and n not in in_defs for n in nodes)


def shown_here(node: Any, value: Any) -> bool:
    """``for w in [A, B]``: the loop walks a list or tuple display written in the ``for`` itself (so
    nothing else holds it) with an item computed at run time: it is unrolled, each item with its own
    shape, and no run-time list of them is made."""
    return isinstance(node, (gast.List, gast.Tuple)) and isinstance(value, ir.Display) \
        and not all(isinstance(i, ir.Const) for i in value.items)


def known_items(value: Any, displays: dict) -> Optional[list]:
    """The items of a list or tuple whose length is known while lowering: a display, a constant
    tuple or list, a name bound to a display (``displays``: a parameter given one); None for anything else."""
    if isinstance(value, ir.Var):
        value = displays.get(value.name)
    if isinstance(value, ir.Display):
        return list(value.items)
    if isinstance(value, ir.Const) and type(value.value) in (tuple, list):
        return [ir.Const(v) for v in value.value]
    return None


def object_appended(converter: Any, stmt: gast.For) -> Optional[gast.Expr]:
    """The first ``name.append(Cls(...))`` in the loop's body, ``Cls`` the user's class (``layers.append(
    Layer(w))``, as a list comprehension of objects becomes: the list is made while transforming, the
    loop unrolled where its length is known); None if none."""
    # (a name the loop binds, its own variable first, is a local even before lowering has seen it:
    # ``[v.copy() for v in items]`` calls a method of the loop's variable, no class of a global)
    bound_here = {n.id for n in all_nodes(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    for node in all_nodes(stmt):
        if is_append(node) and isinstance(node.value.args[0], gast.Call):
            func = root = node.value.args[0].func
            while isinstance(root, gast.Attribute):
                root = root.value
            if isinstance(root, gast.Name) and root.id not in bound_here and converter.local(root.id) is None:
                found, fn = converter.statics.callee(func)
                if found and is_plain_class(fn):
                    return node
    return None


class LoopIteration(Part):
    """The indices and elements of for loops."""

    def __init__(self, state: LoweringState, ssa: SSABuilder) -> None:
        super().__init__(state)
        self.ssa = ssa

    def iteration(self, stmt: gast.For) -> tuple[ir.Expr, Optional[Callable[[ir.Expr], ir.Expr]]]:
        """The range a ``for`` walks, and how to get the element from the index.

        ``range`` loops iterate their own index; sequences, ``enumerate``,
        ``zip`` and ``reversed`` become loops over an index range.
        """
        it, target = stmt.iter, stmt.target
        kind, args = self.iteration_call(it)
        if kind is range:
            if not isinstance(target, gast.Name):
                raise self.state.parsed.error("unpacking a range element", "loop over range with one name", target)
            return self.ssa.flatten(ir.Call(range, tuple(args)), self.state.names.fresh("steps")), None
        if kind is reversed and isinstance(it.args[0], gast.Call) and self.iteration_call(it.args[0])[0] is range:
            forwards = ir.Call(range, tuple(self.iteration_call(it.args[0])[1]))
            backwards = ir.Call(operator.getitem, (forwards, ir.Slice(None, None, ir.Const(-1))))
            if not isinstance(target, gast.Name):
                raise self.state.parsed.error("unpacking a range element", "loop over range with one name", target)
            return self.ssa.flatten(backwards, self.state.names.fresh("steps")), None
        if kind is reversed and not self.iteration_call(it.args[0])[0]:
            seq = self.ssa.flatten(args[0])
            last = ir.Call(operator.sub, (ir.Call(len, (seq,)), ir.Const(1)))
            indices = self.ssa.flatten(ir.Call(range, (last, ir.Const(-1), ir.Const(-1))),
                                       self.state.names.fresh("steps"))
            return indices, lambda k: ir.Call(operator.getitem, (seq, k))
        length, item = self.sequence(it)
        return self.ssa.flatten(ir.Call(range, (length,)), self.state.names.fresh("steps")), item

    def sequence(self, node: Any) -> tuple[ir.Expr, Callable[[ir.Expr], ir.Expr]]:
        """What a ``for`` walks, as its length and its ``k``-th element; ``enumerate``, ``zip`` and
        ``reversed`` nest (``enumerate(zip(a, b))``).  The sequences are read before the loop."""
        kind, args = self.iteration_call(node)
        if kind is enumerate:
            length, item = self.sequence(node.args[0])
            start = args[1] if len(args) > 1 else ir.Const(0)
            return length, lambda k: ir.Display("tuple", (ir.Call(operator.add, (k, start)) if not ir.is_const(start, 0)
                                                          else k, item(k)))
        if kind is zip:
            parts = [self.sequence(a) for a in node.args]
            length = parts[0][0]
            for other, _ in parts[1:]:
                length = ir.Call(min, (length, other))
            return length, lambda k: ir.Display("tuple", tuple(item(k) for _, item in parts))
        if kind is reversed:
            length, item = self.sequence(node.args[0])
            last = self.ssa.flatten(ir.Call(operator.sub, (length, ir.Const(1))))
            return ir.Call(operator.add, (last, ir.Const(1))), lambda k: item(ir.Call(operator.sub, (last, k)))
        seq = self.state.converter.convert(node)  # range(...) too: a range object is indexed
        if isinstance(seq, Record):  # an object whose __iter__ returns iter() of an array: that array
            seq = self.state.converter.calls.protocols.walked(seq, node)
        seq = self.ssa.flatten(seq)
        return ir.Call(len, (seq,)), lambda k: ir.Call(operator.getitem, (seq, k))

    def static_elements(self, stmt: gast.For, it: Any = None) -> Optional[list]:
        """The elements of a loop over a container (``for w in ws``, ``for k, v in d.items()``,
        ``enumerate``/``zip``/``reversed`` of them), or None for a loop run as a loop.  ``it``: an
        iterator call nested in the loop's (``zip(fs, ws)`` in ``enumerate(zip(fs, ws))``), whose
        elements are given only where it walks functions (the rest walk as they did)."""
        nested = it is not None
        it = stmt.iter if it is None else it
        kind, args = self.iteration_call(it)
        if kind is range:
            return None if nested else self.range_over_a_container(stmt, args)
        if kind is None:
            args = [self._converted(it)]
        sequences = []
        functions = next((a for a in args if isinstance(a, Functions)), None)
        if nested and functions is None:
            return None
        for arg, node in zip(args[:1] if kind is enumerate else args, [it] if kind is None else it.args):
            if arg is None and self.iterator_kind(node) in (enumerate, zip):  # enumerate(zip(fs, ws))
                inner = self.static_elements(stmt, node)
                if inner is None:
                    return None
                sequences.append(inner)
                continue
            if isinstance(arg, Functions):  # for act in [relu, np.tanh]: each item another function's call
                sequences.append(list(arg.items) if arg.shown != "dict" else [ir.Const(k) for k in arg.keys])
                continue
            if functions is not None and not isinstance(arg, Record):  # zip(acts, weights): unrolled with them
                sequences.append(self._items_beside(arg, len(functions.items)))
                continue
            if shown_here(node, arg):  # for w in [A, B]: a fresh list of known length, its items of any shape
                if stmt.orelse or stops_early(stmt):
                    return None  # (run as a loop, as before: it may stop early)
                sequences.append(list(arg.items))
                continue
            known = known_items(arg, self.state.displays) if object_appended(self.state.converter, stmt) is not None \
                else None
            if known is not None:  # layers.append(Layer(w)) for w in ws: unrolled, the list made while transforming
                sequences.append(known)
                continue
            if not isinstance(arg, Record):
                keys = constant_strings(arg)
                if keys is None or stmt.orelse or stops_early(stmt):
                    return None  # (strings need no unrolling: a loop that may stop early stays a loop)
                sequences.append(keys)  # for name in ("w", "b"): the keys of a dict, most likely
                continue
            arg = self.state.converter.calls.protocols.walked(arg, stmt)  # (not its attributes: its __iter__'s items)
            if not isinstance(arg, Record):
                return None  # __iter__ returns iter() of an array: walked as a loop (sequence)
            sequences.append(list(arg.items) if arg.sequence else [ir.Const(k) for k in arg.keys])
        if stops_early(stmt) or stmt.orelse:
            raise self.state.parsed.error("break, continue or return in a loop over a container", "the loop is "
                                          "unrolled (each item may have its own shape); compute a flag instead", stmt)
        if kind is enumerate:
            start = args[1] if len(args) > 1 else ir.Const(0)
            if not isinstance(start, ir.Const):
                raise self.state.parsed.error("enumerate of a container with a start computed at run time",
                                              "give a constant start", stmt)
            return [ir.Display("tuple", (ir.Const(i + start.value), item)) for i, item in enumerate(sequences[0])]
        if kind is zip:
            return [ir.Display("tuple", items) for items in zip(*sequences)]
        if kind is reversed:
            return list(reversed(sequences[0]))
        return sequences[0]

    def _items_beside(self, arg: Any, count: int) -> list:
        """The items of a sequence zipped with functions (whose loop is unrolled): a display's or a
        constant's own, else the first ``count`` read by index (a shorter one raises IndexError there)."""
        if isinstance(arg, ir.Display):
            return list(arg.items)
        if isinstance(arg, ir.Const) and type(arg.value) in (list, tuple):
            return [ir.Const(v) for v in arg.value]
        seq = self.ssa.flatten(arg)
        return [ir.Call(operator.getitem, (seq, ir.Const(k))) for k in range(count)]

    def range_over_a_container(self, stmt: gast.For, args: list) -> Optional[list]:
        """``for i in range(len(ws)): ... ws[i] ...``: the indices, where the bounds are constants and the
        body indexes a container by the loop's name (its items may differ in shape), else None."""
        if not (isinstance(stmt.target, gast.Name) and args and all(
                isinstance(a, ir.Const) and type(a.value) is int for a in args)) or stmt.orelse:
            return None
        nodes = all_nodes(stmt)
        if stops_early(stmt):
            return None
        index = stmt.target.id
        steps = range(*(a.value for a in args))
        if (self.appends_a_function(stmt, nodes) or object_appended(self.state.converter, stmt) is not None) \
                and len(steps) <= UNROLLED_APPENDS:
            return [ir.Const(i) for i in steps]  # fs.append(lambda v, k=k: v * k): each item another function
        if not any(isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)
                   and isinstance(self.scope.env.get(n.value.id), Record)
                   and any(isinstance(m, gast.Name) and m.id == index for m in all_nodes(n.slice)) for n in nodes):
            return None
        return [ir.Const(i) for i in steps]

    def appends_a_function(self, stmt: gast.For, nodes: list) -> bool:
        """Whether the loop's body appends a function to a list (a lambda or def made in the body, a
        function of a module, a name bound to one before the loop, a tuple holding one)."""
        made = {n.name for n in nodes if isinstance(n, gast.FunctionDef)}
        converter = self.state.converter

        def function(node: Any) -> bool:
            if isinstance(node, gast.Tuple):
                return any(function(part) for part in node.elts)
            root = node
            while isinstance(root, gast.Attribute):
                root = root.value
            if not isinstance(root, gast.Name):
                return False
            if root.id in made or converter.local(root.id) is not None:
                return root is node and (root.id in made or function_named(converter, node) is not None)
            return converter.statics.resolver.lookup(root.id)[0] and function_named(converter, node) is not None
        return any(is_append(n) and function(n.value.args[0]) for n in nodes)

    def surely_runs(self, stmt: gast.For) -> bool:
        """Whether the loop runs its body at least once, known while lowering: ``range`` of constants
        (``range(3)``, ``range(1, N)`` with ``N`` a module-level integer) that is not empty."""
        it = stmt.iter
        if self.iterator_kind(it) is not range or not all(
                isinstance(a, (gast.Constant, gast.Name, gast.Attribute, gast.UnaryOp)) for a in it.args):
            return False
        bounds = [b.value for b in map(self.state.converter.convert, it.args) if isinstance(b, ir.Const)]
        if len(bounds) != len(it.args) or not all(type(b) is int for b in bounds):
            return False
        return len(range(*bounds)) > 0

    def iteration_call(self, it: Any) -> tuple[Any, list]:
        """The iterator ``it`` calls (range, enumerate, zip, reversed) and its converted arguments;
        an argument that is itself such a call (``enumerate(zip(a, b))``) is None: ``sequence``
        walks it from its own node, and converting it would make a zip object."""
        fn = self.iterator_kind(it)
        if fn is None:
            return None, []
        return fn, [None if self.iterator_kind(a) in (enumerate, zip) else self._converted(a) for a in it.args]

    def _converted(self, node: Any) -> Any:
        """``node`` converted, or the ``Functions`` it names or shows (``zip(acts, ws)``)."""
        return functions_shown(self.state.converter, node) or self.state.converter.convert(node)

    def iterator_kind(self, it: Any) -> Any:
        """range, enumerate, zip or reversed where ``it`` calls one of them, else None."""
        if isinstance(it, gast.Call) and not it.keywords:
            found, fn = self.state.converter.static(it.func)
            if found and fn in (range, enumerate, zip, reversed):
                return fn
        return None

    def checkpoint(self, stmt: gast.For) -> Optional[ir.Expr]:
        """For ``for t in checkpointed(steps, every=k)``: unwrap the iterable, return ``k``; for
        ``snapshots=c``, ``snapshots(c)`` (then the reverse follows the binomial schedule: ``ad/binomial.py``)."""
        it = stmt.iter
        if not (isinstance(it, gast.Call) and self.state.converter.static(it.func) == (True, runtime.checkpointed)):
            return None
        every = [a for a in it.args[1:]] + [k.value for k in it.keywords if k.arg in ("every", "snapshots")]
        if not it.args or len(every) > 1 or any(k.arg not in ("every", "snapshots") for k in it.keywords):
            raise self.state.parsed.error("this use of checkpointed", "write checkpointed(steps), "
                                          "checkpointed(steps, every=k) or checkpointed(steps, snapshots=c)", it)
        stmt.iter = it.args[0]
        if not every:
            return ir.Const(None)
        value = self.ssa.flatten(self.state.converter.convert(every[0]))
        if any(k.arg == "snapshots" for k in it.keywords):
            value = self.ssa.flatten(ir.Call(runtime.snapshots, (value,)))
        return value

    def fixed_point_test(self, stmt: gast.While) -> Optional[Any]:
        """For ``while fixed_point(test):``, the test it marks; None for any other while loop."""
        test = stmt.test
        if not (isinstance(test, gast.Call) and self.state.converter.static(test.func) == (True, runtime.fixed_point)):
            return None
        if len(test.args) != 1 or test.keywords:
            raise self.state.parsed.error("this use of fixed_point", "write while fixed_point(test):, the test "
                                          "that keeps the iteration going (err > tol)", test)
        return test.args[0]

    def while_checkpoint(self, stmt: gast.While) -> Optional[tuple[Any, Any]]:
        """For ``while checkpointed(test, snapshots=c):``, the test and ``c``; None for another loop."""
        test = stmt.test
        if not (isinstance(test, gast.Call) and self.state.converter.static(test.func) == (True, runtime.checkpointed)):
            return None
        snapshots = [k.value for k in test.keywords if k.arg == "snapshots"]
        if len(test.args) != 1 or len(snapshots) != 1 or len(test.keywords) != 1:
            raise self.state.parsed.error("this use of checkpointed in a while loop", "a while loop's trip count "
                                          "is not known in advance: write while checkpointed(test, snapshots=c): "
                                          "(the binomial schedule over the trips a first pass counts)", test)
        return test.args[0], snapshots[0]

    def check_fixed_point(self, stmt: gast.While, body: list[ir.Stmt], exit_flag: Any) -> None:
        """What the fixed-point adjoint needs of the loop: the body is ``x = G(x, p)`` alone, run again
        from the converged state by the reverse sweep."""
        self._check_run_again(stmt, body, exit_flag, "fixed_point", (
            "its reverse sweep runs the body again from the converged state, so only the test may end it: drop "
            "break/return from the loop, or fixed_point",
            "its reverse sweep runs the body again from the converged state, which a write in place would have "
            "changed; compute the new state as a new array (x_new = ...; x = x_new), or drop fixed_point",
            "the reverse sweep runs the body again, which would repeat them; move them out of the loop, or drop "
            "fixed_point"))

    def check_checkpointed(self, stmt: Any, body: list[ir.Stmt], exit_flag: Any) -> None:
        """What checkpointing needs of the loop (a for loop, or a while loop on the binomial schedule)."""
        self._check_run_again(stmt, body, exit_flag, "checkpointed", (
            "checkpointing needs the trip count in advance: drop break/return from the loop, or checkpointed",
            None,  # (writes into arrays are followed: the snapshots hold those arrays, ad/recording.py)
            "the reverse sweep runs each segment again, which would repeat them; move them out of the loop, or "
            "drop checkpointed"))

    def _check_run_again(self, stmt: Any, body: list[ir.Stmt], exit_flag: Any, marker: str,
                         why: tuple[str, Optional[str], str]) -> None:
        """A loop whose body the reverse sweep runs again: no early exit, no write in place (unless
        ``why`` says None for it: checkpointed loops' snapshots hold the arrays written), no effect
        (``why``: what to say of each).  A raise may stay: run again on the values it saw, a raise that
        did not run then does not run now; so may the checks the lowering adds (the fact ``only_raises``)."""
        early, writes, effects = why
        if exit_flag is not None:
            raise self.state.parsed.error(f"a {marker} loop that can stop early", early, stmt)
        if writes is not None and any(isinstance(s, ir.Store) for s in ir.walk(body)):
            raise self.state.parsed.error(f"a {marker} loop that writes into an array", writes, stmt)
        if any(isinstance(s, ir.Effect) and not rules.fact(getattr(s.value, "fn", None), "only_raises")
               for s in ir.walk(body)):
            raise self.state.parsed.error(f"print, assert, logging or warnings in a {marker} loop", effects, stmt)
