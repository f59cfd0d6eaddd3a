"""Values to SSA statements (stage 2, lower): the heart of SSA construction.

Input: an IR tree of the converter (``expressions.py``) for the body being
lowered: calls, displays, slices, and the pending nodes ``Choice`` (a
conditional expression), ``Once`` (a value read twice, computed once),
``Inline`` (a call of the user's function) and ``Record`` (a static container).
Output: statements appended to ``LoweringState.block`` and the atom (an
``ir.Var`` or ``ir.Const``) or display that holds the value: one operation per
statement, each value named once (``naming.py`` chooses the names), a pure
operation repeated within a statement computed once.  The arrays a call makes
afresh are added to ``LoweringState.buffers`` (the only ones the function may
write into).  An ``Inline`` is lowered by the driver (``Lowerer.inline``).  An
operator whose operand a call of the user's method gives back as an object is
that object's method (``object_operator``).
"""
from __future__ import annotations

import operator
from types import SimpleNamespace
from typing import Any, Callable, Optional

import gast

from ..core import ir, language, runtime
from ..core.errors import TransformError
from ..core.identity import Identity
from ..rules import registry as rules
from ..memory.aliasing import Chosen, new_object
from .calls import maybe_object
from .expressions import Bound, Choice, Dispatch, Inline, Known, Nested, Once, Record, is_user_function
from ..frontend.conversion import MethodCall
from .lower_state import Part
from ..frontend.user_classes import operator_methods
from .naming import describe
from ..frontend.parse import parse_function, updated_parameters


# A helper this short, of assignments and one return, is lowered in place even where the target keeps
# the user's helpers as calls (``LoweringState.inline_small_helpers``): a call with its split adjoint
# costs more than the few operations it wraps (rk4's Lotka-Volterra step: two lines, four calls a step).
# Wherever the call stands, not only in a loop: the gradient itself is called again and again (an
# optimiser's steps), so a call outside any loop costs its forward and backward calls, tape and tuples
# at every gradient evaluation too; and one rule for every call site keeps the generated code of a
# helper alike wherever it is called.  The code stays readable: each inlined line's comment names the
# helper's own line.
SMALL_HELPER_STATEMENTS = 6
# ... and at most this many deep, one written into another: a chain of short helpers each calling the next
# (300 deep in tests/programs/test_long_programs.py) keeps its calls below, and the lowering's stack stays shallow.
SMALL_HELPER_DEPTH = 4
_STRAIGHT = (gast.Assign, gast.AnnAssign)  # (no augmented assignment: x += 1 of an array writes into the caller's)
_NOT_IN_A_SMALL_HELPER = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
                          gast.NamedExpr, gast.Starred, gast.Yield, gast.YieldFrom, gast.Await, gast.Subscript,
                          gast.Global, gast.Nonlocal)


def small_helper(fn: Callable, filename: str) -> bool:
    """A helper of the user's short enough to lower in place: defined in ``filename`` (the file of the
    function calling it, so that the generated code's line comments, and the refusals later stages
    locate by line, name lines of one file), plain positional parameters (a default left out, or a
    keyword, is bound by the converter before this is asked), then at most ``SMALL_HELPER_STATEMENTS``
    assignments to names and a return, with no subscript (it reads and writes no array element: those
    stay in helpers whose adjoints handle them), no augmented assignment, no nested scope.  Lowered in
    place, its names are its own and the other names it reads are read from its own module, as Python
    does; a recursive call of it stays a call (``LoweringState.helpers_inlined``); where it cannot be
    lowered in place, the whole function is lowered again with its calls kept (``pipeline._lowered_for``)."""
    try:
        parsed = parse_function(fn)
    except Exception:  # (its own lowering says why, where it is called)
        return False
    node = parsed.node
    if parsed.filename != filename:
        return False
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or getattr(args, "posonlyargs", None) or node.decorator_list:
        return False
    body = list(node.body)
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    if not 1 <= len(body) <= SMALL_HELPER_STATEMENTS + 1 or not isinstance(body[-1], gast.Return) \
            or body[-1].value is None:
        return False
    for stmt in body[:-1]:
        if not isinstance(stmt, _STRAIGHT):
            return False
    return not any(isinstance(n, _NOT_IN_A_SMALL_HELPER) for stmt in body for n in gast.walk(stmt))


def returns_a_dict(fn: Callable, filename: str) -> bool:
    """A helper of the user's, defined in ``filename``, that returns a dict display or a tuple or list
    display holding one (``return loss, {"h": h}``): lowered in place, so the caller reads the dict as
    the helper built it (a helper called from generated code gives back a tuple of leaves)."""
    try:
        parsed = parse_function(fn)
    except Exception:  # (its own lowering says why, where it is called)
        return False

    def holds_a_dict(value: Any) -> bool:
        if isinstance(value, gast.Dict):
            return True
        return isinstance(value, (gast.Tuple, gast.List)) and any(holds_a_dict(e) for e in value.elts)
    return parsed.filename == filename and any(isinstance(n, gast.Return) and holds_a_dict(n.value)
                                               for n in gast.walk(parsed.node))


class SSABuilder(Part):
    """Emits the statements that compute a value, and names it."""

    def flatten(self, expr: Any, name: Optional[str] = None) -> ir.Expr:
        """Emit statements computing ``expr``; return the atom holding it."""
        if ir.is_atom(expr):
            # a view read after its array was written shows the array as it is now (taken again, or refused)
            return self.state.host.read_now(expr) if isinstance(expr, ir.Var) else expr
        if isinstance(expr, Choice):
            return self.choice(expr, name)
        if isinstance(expr, Once):
            if expr.atom is None:
                expr.atom = self.flatten(expr.value)
            return expr.atom
        if isinstance(expr, Inline):
            if expr.factory:
                raise self.state.refusal("a function a call returns, used as a value", "bind it to a name in a "
                                         "statement of its own (act = make_act(0.1)), then call it: act(x)")
            return self.state.host.inline(expr)
        if isinstance(expr, (Nested, Dispatch, Known, Bound)):
            raise self.state.refusal("a nested function used as a value", "call it where it is needed (its result "
                                     "can be differentiated, the function itself cannot)")
        if isinstance(expr, ir.Slice):
            return ir.Slice(*(None if p is None else self.flatten(p) for p in (expr.lower, expr.upper, expr.step)))
        if isinstance(expr, Record):
            return self.flatten(self.as_display(expr))
        if isinstance(expr, ir.Display):
            return self.flatten_items(expr)
        if isinstance(expr.fn, MethodCall):
            return self.method_call(expr)
        if is_user_function(expr.fn) and any(isinstance(a, Record) for a in expr.args):
            return self.inline_function(expr.fn, expr.args)
        if is_user_function(expr.fn) and expr.fn not in self.state.helpers_inlined and not expr.kwargs and (
                self.state.inline_helpers or (len(self.state.helpers_inlined) < SMALL_HELPER_DEPTH and (
                    (self.state.inline_small_helpers and small_helper(expr.fn, self.state.filename))
                    or (self.state.inline_view_helpers and self.hands_views_of_written(expr))
                    or (self.state.inline_view_helpers and updated_parameters(expr.fn))
                    or returns_a_dict(expr.fn, self.state.filename)))):
            return self.inline_helper(expr.fn, expr.args)
        if any(self.makes_record(a) for a in expr.args) and operator_methods(expr.fn) is not None:
            return self.object_operator(expr)
        if expr.fn is operator.getitem and self.makes_record(expr.args[0]):
            return self.item_of_call(expr)
        first = None if not expr.args else expr.args[0] if isinstance(expr.args[0], Record) else self.flatten(expr.args[0])
        if expr.fn is operator.getitem and isinstance(first, Record):  # helper(x)[0], the helper lowered in place
            return self.item_of_record(first, expr.args[1])
        args = tuple(self.flatten(a) for a in expr.args[1:])
        if first is not None:
            args = (self.flatten(first) if isinstance(first, Record) else first,) + args
        kwargs = tuple((k, self.flatten(v)) for k, v in expr.kwargs)
        if is_user_function(expr.fn) and not self.state.generated:
            self.guard_updated_arguments(expr.fn, args)
        if expr.fn is operator.getitem and isinstance(args[0], ir.Display):
            index, items = args[1], args[0].items
            if isinstance(index, ir.Const) and isinstance(index.value, int) and -len(items) <= index.value < len(items):
                return items[index.value]  # (a, b)[0] is a
            args = (self.materialise(args[0], "items"),) + args[1:]
        if expr.fn is len and len(args) == 1 and isinstance(args[0], ir.Display):
            return ir.Const(len(args[0].items))
        call = ir.Call(expr.fn, args, kwargs)
        key = self.reuse_key(call) if name is None else None
        if key in self.state.computed:
            return self.state.computed[key]
        target = self.state.names.fresh(describe(call, self.state.user_names)) if name is None else name
        self.state.block.append(ir.Assign(target, call, self.state.line))
        self.state.host.made(target, call)
        if rules.makes_fresh_array(expr.fn):
            self.state.buffers.add(target)
            if rules.fact(expr.fn, "kind_of_argument") and len(args) == 1:
                self.state.maybe_list_copies[target] = args[0]
        elif new_object(call, self.state.helper_shares):
            self.state.buffers.add(target)  # written into by index only: += rebinds a number
            self.state.maybe_numbers.add(target)
        if key is not None:
            self.state.computed[key] = ir.Var(target)
        return ir.Var(target)

    def guard_updated_arguments(self, fn: Callable, args: tuple) -> None:
        """A call of the user's ``fn`` kept as a call, where ``fn`` updates a parameter in place: the
        argument passed there must be a number (whose ``+=`` only rebinds), checked where the code runs
        (an ``InPlace`` record: refused while transforming where the kinds prove an array).  NumPy would
        change the caller's array, which a call run as Python, or differentiated apart, hides."""
        for update in updated_parameters(fn):
            if update.position < len(args) and isinstance(args[update.position], ir.Display) \
                    and args[update.position].kind == "list":
                raise TransformError(
                    f"the update of {update.name} in {fn.__name__}", f"{update.name} is a list the caller holds, "
                    f"which Python changes in place, and the call of {fn.__name__} is not lowered in place here; "
                    f"build a new list in {fn.__name__} and return it, and assign it where you call it",
                    filename=update.filename, line=update.line, column=update.column)
            if update.position < len(args) and isinstance(args[update.position], ir.Var):
                passed, shared = args[update.position], f"the argument {update.name} of {fn.__name__}"
                filename = update.filename
                guard = ir.Effect(ir.Call(runtime.check_number_update, (
                    passed, ir.Const(update.name), ir.Const(shared), ir.Const(filename), ir.Const(update.line))),
                    self.state.line)
                self.state.block.append(guard)
                self.state.in_place.append(ir.InPlace(passed.name, update.name, shared, update.line, update.column,
                                                      filename=filename, guard=guard, site=self.state.site))

    def hands_views_of_written(self, call: ir.Call) -> bool:
        """A helper given an array the function writes into (or a view of one) that may hand back a view
        of it (``def split(v): return v[:2], v[2:]``): lowered in place, so that the views it makes are
        known as views (``Views.chain``) and show a later write, as NumPy's do.  (Where it cannot be
        lowered in place, the call stays, and reading its result after the write is refused.)"""
        return self.state.helper_shares(call.fn) and self.state.host.passes_written(call)

    def makes_record(self, expr: Any) -> bool:
        """A call of the user's function given a container, which may give back a container (or a
        method or operator of what such a call gives back: ``calls.maybe_object``)."""
        return maybe_object(expr)

    def method_call(self, expr: ir.Call) -> Any:
        """``Model(w).scaled(2.0).loss(x)``: the call giving the object lowered in place first, then the
        method of its class called on it (``MethodCall``)."""
        owner = self.flatten(expr.args[0])
        name = expr.fn.name
        if not isinstance(owner, Record):
            what = f"the method .{name}()" if expr.fn.called else f"the attribute .{name}"
            raise self.state.refusal(f"{what} of what a call gives back", "it is not an object of your class (an "
                                     "array has only the methods and attributes with a rule: sum, mean, reshape, "
                                     ".T, ...); call the NumPy function instead")
        at = SimpleNamespace(lineno=self.state.line, col_offset=None)
        converter = self.state.converter
        result = converter.calls.objects.record_method(owner, name, list(expr.args[1:]), expr.kwargs, at) \
            if expr.fn.called else converter.record_attribute(owner, name, at)
        return result if isinstance(result, Record) else self.flatten(result)

    def item_of_call(self, expr: ir.Call) -> Any:
        """``helper(obj)["b"]``, ``Model(w).parts()[0]``: the call lowered in place first; an item of the
        container it gives back is read as the converter reads one (``record_item``)."""
        owner = self.flatten(expr.args[0])
        if not isinstance(owner, Record):
            return self.flatten(ir.Call(expr.fn, (owner,) + tuple(expr.args[1:]), expr.kwargs))
        return self.item_of_record(owner, expr.args[1])

    def item_of_record(self, owner: Record, index: Any) -> Any:
        """``owner[index]`` read as the converter reads an item of a record (a record stays one)."""
        at = SimpleNamespace(lineno=self.state.line, col_offset=None)
        result = self.state.converter.record_item(owner, index, at)
        return result if isinstance(result, Record) else self.flatten(result)

    def object_operator(self, expr: ir.Call) -> Any:
        """``v * 3.0 + w`` where ``v * 3.0`` is a method of the user's class giving back an object:
        the operands settled first, then, if one is an object, the operator is its method."""
        operands = [self.flatten(a) if self.makes_record(a) else a for a in expr.args]
        if not any(isinstance(o, Record) and o.kind in ("object", "dataclass") for o in operands):
            return self.flatten(ir.Call(expr.fn, tuple(operands), expr.kwargs))
        at = SimpleNamespace(lineno=self.state.line, col_offset=None)
        right = operands[1] if len(operands) == 2 else None
        return self.flatten(self.state.converter.calls.objects.operator_method(expr.fn, operands[0], right, at))

    def materialise(self, display: ir.Display, base: str) -> ir.Var:
        """Bind a tuple or list display to a name (SSA: ``t = (a, b)``)."""
        name = self.state.names.fresh(base)
        self.state.block.append(ir.Assign(name, display, self.state.line))
        self.state.displays[name] = display
        self.state.host.made(name, display)
        return ir.Var(name)

    def flatten_items(self, display: ir.Display) -> ir.Display:
        """``display`` with each item flattened to an atom (the display itself is no statement)."""
        return ir.Display(display.kind, tuple(self.flatten(i) for i in display.items))

    def as_display(self, record: Record) -> ir.Display:
        """A list or tuple record where a value is needed (``np.stack(ws)``, ``sum(d.values())``)."""
        if not record.sequence:
            raise self.state.refusal(f"a {record.cls.__name__} used as a value", "pass its items (d['w']) or fields "
                                     "(p.w); a container can be passed whole only to the user's own functions")
        return ir.Display("list" if record.kind == "list" else "tuple", record.items)

    def inline_function(self, fn: Callable, args: tuple) -> Any:
        """A call of the user's function (or method) with a container argument: its body is lowered in
        place, as for a nested function, so the container stays static."""
        callee = parse_function(fn)
        return self.state.host.inline(Inline(Nested(callee.node), args), callee)

    def inline_helper(self, fn: Callable, args: tuple) -> Any:
        """A call of the user's helper lowered in place (``LoweringState.inline_helpers``)."""
        self.state.helpers_inlined.append(fn)
        try:
            return self.inline_function(fn, args)
        finally:
            self.state.helpers_inlined.pop()

    def reuse_key(self, call: ir.Call) -> Optional[tuple]:
        """What identifies ``call``'s value within this statement and block, if it may be reused."""
        # pure operations (declared reusable=True) an expression may repeat (``temp[t] + a * (outside[t] - temp[t])``):
        # the second reuses the first's value, so the forward sweep reads once and the reverse sweep adds once
        if not rules.fact(call.fn, "reusable") or call.kwargs:
            return None
        key = (Identity(self.state.block), call.fn, tuple(ir.value_key(a) for a in call.args))
        try:
            hash(key)
        except TypeError:  # an array constant, or a slice
            return None
        return key

    def choice(self, choice: Choice, name: Optional[str]) -> ir.Expr:
        """A conditional expression (or ``and``/``or``) as an if statement; where the test is known
        while lowering (``kind == "pad"`` on a string argument), only the part it chooses, as for an
        if statement (the other may call what cannot run or be differentiated there)."""
        test = self.flatten(choice.test)
        if isinstance(test, ir.Const) and (language.is_truth_value(test.value) or isinstance(test.value, (str, type(None)))):
            chosen = choice.then if test.value else choice.orelse
            return test if chosen is None else self.flatten(chosen, name)
        merged = self.state.names.fresh(name or "choice")
        branches, values = [], []
        for part in (choice.then, choice.orelse):
            with self.state.new_block() as block:
                value = test if part is None else self.flatten(part)
                block.append(ir.Assign(merged, value, self.state.line, merge=True))
            branches.append(block)
            values.append(value)
        self.state.block.append(ir.If(test, branches[0], branches[1], self.state.line))
        self.state.host.made(merged, Chosen(test, tuple(values)))  # what each path's value may view
        return ir.Var(merged)
