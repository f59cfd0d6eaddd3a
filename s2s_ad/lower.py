"""Stage 2: gast → SSA three-address IR.

Input: a ``ParsedFunction`` (its body already checked against the subset).
Output: an ``ir.Function`` satisfying the SSA invariants of ``ir.py``: one
operation per statement, every value named once, constants inline, names
derived from the user's (``a``, ``a_1`` for a reassigned ``a``, ``x_sq`` for
``x ** 2``, ``sin_x`` for ``np.sin(x)``).  Plain copies (``a = x``) and
constant assignments do not become statements: later reads use the copied
value directly.

The same expression converter turns the bodies of rule templates into IR
trees (``template_ir``); there nothing is flattened.
"""
from __future__ import annotations

import builtins
import copy
import inspect
import keyword
import operator
import types
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Optional

import gast
import numpy as np

from . import ir, rules, runtime
from .desugar import desugar
from .errors import TransformError
from .parse import ParsedFunction, Resolver

BINARY_OPERATORS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
    gast.Pow: operator.pow, gast.MatMult: operator.matmul,
}
UNARY_OPERATORS = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_}
COMPARISONS = {
    gast.Lt: operator.lt, gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
    gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Is: operator.is_, gast.IsNot: operator.is_not,
}
# Words for naming intermediate values after the operation that made them.
_OP_WORDS = {
    operator.add: ("plus", "total"), operator.sub: ("minus", "diff"), operator.mul: ("times", "prod"),
    operator.truediv: ("over", "ratio"), operator.matmul: ("at", "matprod"), operator.pow: ("pow", "power"),
    operator.mod: ("mod", "rem"), operator.floordiv: ("div", "quot"),
}
_CONSTANT_TYPES = (int, float, complex, bool, str, type(None), np.generic)
_NAME_LIMIT = 16


def _is_plain_constant(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_is_plain_constant(v) for v in value)
    return isinstance(value, _CONSTANT_TYPES)


class ExpressionConverter:
    """Turns gast expressions into IR trees, resolving every name it meets.

    ``local`` maps a name to the IR value it currently holds, or ``None`` if
    the name is not local; ``error`` builds a located ``TransformError``.
    """

    def __init__(self, local: Callable[[str], Optional[ir.Expr]], resolver: Resolver,
                 error: Callable[[str, str, Any], TransformError], check_calls: bool = True) -> None:
        self.check_calls = check_calls
        self.choice: Optional[Callable] = None  # how conditional expressions are represented
        self.local = local
        self.resolver = resolver
        self.error = error

    def convert(self, node: Any) -> ir.Expr:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"the expression {type(node).__name__}", "rewrite it with simpler expressions", node)
        return method(node)

    def _Constant(self, node: gast.Constant) -> ir.Expr:
        return ir.Const(node.value)

    def _Name(self, node: gast.Name) -> ir.Expr:
        value = self.local(node.id)
        if value is not None:
            return value
        return self._global_value(node.id, self._lookup(node), node)

    def _lookup(self, node: gast.Name) -> Any:
        found, value = self.resolver.lookup(node.id)
        if not found:
            raise self.error(f"the name {node.id!r}", "it is not defined where the function is", node)
        return value

    def _global_value(self, name: str, value: Any, node: Any) -> ir.Expr:
        if _is_plain_constant(value):
            return ir.Const(value)
        if isinstance(value, np.ndarray):
            return ir.Const(value)
        raise self.error(f"the value of {name!r} ({type(value).__name__})",
                         "only numbers and arrays can be used as values; functions must be called", node)

    def _UnaryOp(self, node: gast.UnaryOp) -> ir.Expr:
        operand = self.convert(node.operand)
        fn = UNARY_OPERATORS.get(type(node.op))
        if fn is None:
            raise self.error("the operator ~", "use np.logical_not or arithmetic", node)
        if fn is operator.neg and isinstance(operand, ir.Const) and isinstance(operand.value, (int, float)):
            return ir.Const(-operand.value)
        return ir.Call(fn, (operand,))

    def _BinOp(self, node: gast.BinOp) -> ir.Expr:
        fn = BINARY_OPERATORS.get(type(node.op))
        if fn is None:
            raise self.error(f"the operator {type(node.op).__name__}", "bitwise operators cannot be differentiated", node)
        return ir.Call(fn, (self.convert(node.left), self.convert(node.right)))

    def _Compare(self, node: gast.Compare) -> ir.Expr:
        op = type(node.ops[0])
        left, right = self.convert(node.left), self.convert(node.comparators[0])
        if op is gast.In:
            return ir.Call(operator.contains, (right, left))
        if op is gast.NotIn:
            return ir.Call(operator.not_, (ir.Call(operator.contains, (right, left)),))
        return ir.Call(COMPARISONS[op], (left, right))

    def _Tuple(self, node: gast.Tuple) -> ir.Expr:
        return ir.Display("tuple", tuple(self.convert(e) for e in node.elts))

    def _List(self, node: gast.List) -> ir.Expr:
        return ir.Display("list", tuple(self.convert(e) for e in node.elts))

    def _Slice(self, node: gast.Slice) -> ir.Expr:
        parts = (node.lower, node.upper, node.step)
        return ir.Slice(*(None if p is None else self.convert(p) for p in parts))

    def _Subscript(self, node: gast.Subscript) -> ir.Expr:
        return ir.Call(operator.getitem, (self.convert(node.value), self.convert(node.slice)))

    def _IfExp(self, node: gast.IfExp) -> Any:
        return self._make_choice(self.convert(node.test), self.convert(node.body), self.convert(node.orelse), node)

    def _BoolOp(self, node: gast.BoolOp) -> Any:
        values = [self.convert(v) for v in node.values]
        result = values[-1]
        for value in reversed(values[:-1]):
            if isinstance(node.op, gast.And):
                result = self._make_choice(value, result, None, node)
            else:
                result = self._make_choice(value, None, result, node)
        return result

    def _make_choice(self, test: Any, then: Any, orelse: Any, node: Any) -> Any:
        if self.choice is None:
            raise self.error("a conditional expression here", "use it in a function body", node)
        return self.choice(test, then, orelse)

    def static(self, node: Any) -> tuple[bool, Any]:
        return self._static(node)

    def _static(self, node: Any) -> tuple[bool, Any]:
        """Resolve ``np.linalg.norm``-style chains of modules and classes."""
        if isinstance(node, gast.Name):
            if self.local(node.id) is not None:
                return False, None
            return True, self._lookup(node)
        if isinstance(node, gast.Attribute):
            found, base = self._static(node.value)
            if found and isinstance(base, (types.ModuleType, type)):
                if not hasattr(base, node.attr):
                    raise self.error(f"{getattr(base, '__name__', base)}.{node.attr}", "no such attribute", node)
                return True, getattr(base, node.attr)
        return False, None

    def _Attribute(self, node: gast.Attribute) -> ir.Expr:
        found, value = self._static(node)
        if found:
            return self._global_value(node.attr, value, node)
        fn = rules.attribute_function(node.attr)
        if fn is None:
            raise self.error(f"the attribute .{node.attr}", "only array attributes with a rule (.T, .shape, "
                             ".ndim, .size) can be read", node)
        return ir.Call(fn, (self.convert(node.value),))

    def _Call(self, node: gast.Call) -> ir.Expr:
        args = [self.convert(a) for a in node.args]
        kwargs = tuple((k.arg, self.convert(k.value)) for k in node.keywords)
        if any(k.arg is None for k in node.keywords):
            raise self.error("**kwargs in a call", "pass keyword arguments one by one", node)
        if isinstance(node.func, gast.Name) and isinstance(self.local(node.func.id), _Nested):
            if kwargs:
                raise self.error(f"keyword arguments to the nested function {node.func.id!r}", "pass them by "
                                 "position", node)
            return _Inline(self.local(node.func.id), tuple(args))
        found, fn = self._static(node.func)
        if not found:
            fn, args = self._method(node, args)
        if self.check_calls:
            self._check_callee(fn, node, tuple(args), kwargs)
            if is_user_function(fn):
                return ir.Call(fn, self._bind_user_call(fn, args, kwargs, node))
        return ir.Call(fn, tuple(args), kwargs)

    def _bind_user_call(self, fn: Any, args: list, kwargs: tuple, node: Any) -> tuple:
        """Arguments of a call to the user's own function, in parameter order, defaults filled in."""
        try:
            bound = inspect.signature(fn).bind(*args, **dict(kwargs))
        except TypeError as exc:
            raise self.error(f"the call of {describe_callable(fn)}", str(exc), node) from None
        bound.apply_defaults()
        values = []
        for name, value in bound.arguments.items():
            if not isinstance(value, (ir.Var, ir.Const, ir.Call, ir.Slice, ir.Display, _Choice)):
                if not _is_plain_constant(value):
                    raise self.error(f"the default value of {name!r} in {describe_callable(fn)}",
                                     "only numbers, strings, None and tuples of them can be defaults", node)
                value = ir.Const(value)
            values.append(value)
        return tuple(values)

    def _method(self, node: gast.Call, args: list) -> tuple[Any, list]:
        func = node.func
        if not isinstance(func, gast.Attribute):
            raise self.error(f"a call of {type(func).__name__}", "call functions by name", node)
        entry = rules.method_function(func.attr)
        if entry is None:
            raise self.error(f"the method .{func.attr}()", "only array methods with a rule can be called "
                             "(sum, mean, reshape, ...); call the NumPy function instead", node)
        fn, pack = entry
        if pack and len(args) > 1:
            args = [ir.Display("tuple", tuple(args))]
        return fn, [self.convert(func.value)] + args

    def _check_callee(self, fn: Any, node: Any, args: tuple, kwargs: tuple) -> None:
        name = describe_callable(fn)
        if fn in _REFUSED_CALLS if _hashable(fn) else False:
            raise self.error(f"the call of {name}", _REFUSED_CALLS[fn], node)
        rule = rules.adjoint_rule(fn)
        if rule is not None:
            try:
                rules.bind_arguments(rule, args, kwargs)
            except rules.ArgumentMismatch as exc:
                raise self.error(f"the call of {name}", f"it passes {exc}", node) from None
            return
        if rules.is_nondifferentiable(fn):
            return
        if is_user_function(fn):
            try:
                inspect.getsource(fn)
            except (OSError, TypeError):
                raise self.error(f"the call of {name}", "its source cannot be read and it has no derivative "
                                 f"rule; add one with @s2s_ad.adjoint({name})", node) from None
            return
        raise self.error(f"the call of {name}", f"it has no derivative rule; add one with "
                         f"@s2s_ad.adjoint({name}) (see README, 'Adding a rule')", node)


# Calls refused outright, with what to do instead.
_REFUSED_CALLS = {
    eval: "code built at run time cannot be transformed; write the expression out",
    exec: "code built at run time cannot be transformed; write the statements out",
    print: "a differentiated function must be pure; print outside it, or print df's result",
    open: "a differentiated function must be pure; read files outside it and pass the data in",
    input: "a differentiated function must be pure; ask outside it and pass the answer in",
    setattr: "a differentiated function must not mutate objects; return the new value instead",
    globals: "pass what you need as arguments",
    locals: "name the values you need",
}


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def is_user_function(fn: Any) -> bool:
    """A plain Python function with no rule: transformed and called through its own adjoint."""
    return isinstance(fn, types.FunctionType) and not rules.is_known(fn)


def _stored_names(node: Any) -> set[str]:
    """User names assigned anywhere inside ``node`` (loop targets and appended lists included)."""
    names = {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return names | {n.value.func.value.id for n in gast.walk(node) if _is_append(n)}


def _is_append(node: Any) -> bool:
    """``name.append(value)`` as a statement."""
    return (isinstance(node, gast.Expr) and isinstance(node.value, gast.Call)
            and isinstance(node.value.func, gast.Attribute) and node.value.func.attr == "append"
            and isinstance(node.value.func.value, gast.Name) and len(node.value.args) == 1
            and not node.value.keywords)


def describe_callable(fn: Any) -> str:
    """``np.sin``, ``math.sin``, ``mymodule.helper``: how a user would spell ``fn``."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None) or ("numpy" if isinstance(fn, np.ufunc) else "")
    module = {"numpy": "np", "builtins": "", "_operator": "operator"}.get(module, module)
    return f"{module}.{name}" if module else name


class _Names:
    """Hands out unique SSA names, keeping the user's names where it can."""

    # Names generated code reads as globals must never be shadowed by a local.
    RESERVED = ({"np", "math", "operator", "builtins"} | set(keyword.kwlist) | set(dir(builtins))
                | {n for n in dir(runtime) if not n.startswith("_")})

    def __init__(self, reserved: set[str]) -> None:
        self.taken = set(self.RESERVED) | set(reserved)

    @staticmethod
    def _clean(base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base).strip("_") or "v"
        if base[0].isdigit():
            base = "v_" + base
        return base

    def fresh(self, base: str) -> str:
        base = self._clean(base)
        if base not in self.taken:
            self.taken.add(base)
            return base
        stem, _, suffix = base.rpartition("_")
        if stem and suffix.isdigit():
            base = stem
        n = 1
        while f"{base}_{n}" in self.taken:
            n += 1
        self.taken.add(f"{base}_{n}")
        return f"{base}_{n}"

    def claim(self, name: str) -> str:
        """Use the user's own name if free (the first binding of a local)."""
        clean = self._clean(name)
        if clean == name and name not in self.taken:
            self.taken.add(name)
            return name
        return self.fresh(name)


@dataclass(frozen=True)
class _Nested:
    """A function defined in the body: calls to it are inlined (see ``Lowering.inline``)."""

    node: Any


@dataclass(frozen=True)
class _Inline:
    """A call of a nested function, before flattening."""

    function: _Nested
    args: tuple


@dataclass(frozen=True)
class _Choice:
    """``then if test else orelse`` before flattening; ``None`` means "the test's value"
    (``a and b`` is ``_Choice(a, b, None)``, ``a or b`` is ``_Choice(a, None, b)``)."""

    test: Any
    then: Any
    orelse: Any


class Lowering:
    """Flattens one function body into SSA statements, block by block."""

    def __init__(self, parsed: ParsedFunction) -> None:
        self.parsed = parsed
        self.names = _Names(set())
        self.user_names: set[str] = set()
        self.buffers: set[str] = set()  # arrays this function created: the only ones it may write into
        self.inlining: set[str] = set()  # nested functions being inlined (to refuse recursion)
        self.env: dict[str, Any] = {}
        self.block: list[ir.Stmt] = []
        self.line: Optional[int] = None
        self.converter = ExpressionConverter(lambda name: self.env.get(name), parsed.resolver, parsed.error)
        self.converter.choice = _Choice
        node = parsed.node
        desugar(node, {n.id for n in gast.walk(node) if isinstance(n, gast.Name)} | set(parsed.params))
        self.reads = Counter(n.id for n in gast.walk(node)
                             if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))

    def run(self) -> ir.Function:
        node = self.parsed.node
        params = []
        for p in self.parsed.params:
            name = self.names.claim(p)
            self.env[p] = ir.Var(name)
            self.user_names.add(name)
            params.append(name)
        body = self.lower_block(node.body)
        docstring = gast.get_docstring(node) if hasattr(gast, "get_docstring") else None
        return ir.Function(node.name, params, body, self.parsed.filename, node.lineno, docstring)

    def lower_block(self, stmts: list) -> list[ir.Stmt]:
        outer, self.block = self.block, []
        for stmt in stmts:
            self.line = stmt.lineno
            self.statement(stmt)
        inner, self.block = self.block, outer
        return inner

    def statement(self, stmt: Any) -> None:
        if isinstance(stmt, gast.Assign):
            value = self.converter.convert(stmt.value)
            for target in stmt.targets:
                self.bind(target, value)
        elif isinstance(stmt, gast.AugAssign):
            op = BINARY_OPERATORS[type(stmt.op)]
            current = self.converter.convert(stmt.target)
            self.bind(stmt.target, ir.Call(op, (current, self.converter.convert(stmt.value))))
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
            self.env[stmt.name] = _Nested(stmt)
        # Pass and the docstring need nothing.

    # -- joins -------------------------------------------------------------

    def _read_outside(self, node: Any, name: str) -> bool:
        inside = sum(1 for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == name
                     and isinstance(n.ctx, gast.Load))
        return self.reads[name] > inside

    def _joined(self, node: Any) -> list[str]:
        """User names assigned inside ``node`` whose value matters outside it."""
        return sorted(v for v in _stored_names(node) if v in self.env or self._read_outside(node, v))

    def _merge_into(self, block: list[ir.Stmt], env: dict, targets: dict[str, str], line: Optional[int]) -> None:
        for user_name, merged in targets.items():
            value = env.get(user_name, ir.Const(None))
            if isinstance(value, ir.Display) and any(True for _ in ir.names_read(value)):
                # a merge copy joins names: give a display of variables a name of its own first
                name = self.names.fresh("items")
                block.append(ir.Assign(name, value, line))
                value = ir.Var(name)
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

        body, exit_flag = self._loop_body(stmt.body, targets, prologue)
        self.env = {**before, **{v: ir.Var(m) for v, m in targets.items()}}
        self.block.append(ir.For(index, iterable, body, line, exit_flag))

    def while_loop(self, stmt: gast.While) -> None:
        targets = self._carry(stmt)
        before = dict(self.env)
        outer, self.block = self.block, []
        test = self.flatten(self.converter.convert(stmt.test))
        test_block, self.block = self.block, outer
        body, exit_flag = self._loop_body(stmt.body, targets, lambda: None)
        self.env = {**before, **{v: ir.Var(m) for v, m in targets.items()}}
        self.block.append(ir.While(test_block, test, body, stmt.lineno, exit_flag))

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
        if kind is enumerate:
            seq = self.flatten(args[0])
            start = args[1] if len(args) > 1 else ir.Const(0)
            steps = self.flatten(ir.Call(range, (ir.Call(len, (seq,)),)), self.names.fresh("steps"))
            return steps, lambda k: ir.Display("tuple", (ir.Call(operator.add, (k, start)) if not ir.is_const(start, 0)
                                                          else k, ir.Call(operator.getitem, (seq, k))))
        if kind is zip:
            seqs = [self.flatten(a) for a in args]
            length = ir.Call(len, (seqs[0],))
            for other in seqs[1:]:
                length = ir.Call(min, (length, ir.Call(len, (other,))))
            steps = self.flatten(ir.Call(range, (length,)), self.names.fresh("steps"))
            return steps, lambda k: ir.Display("tuple", tuple(ir.Call(operator.getitem, (s, k)) for s in seqs))
        if kind is reversed:
            seq = self.flatten(args[0])
            last = ir.Call(operator.sub, (ir.Call(len, (seq,)), ir.Const(1)))
            steps = self.flatten(ir.Call(range, (last, ir.Const(-1), ir.Const(-1))), self.names.fresh("steps"))
            return steps, lambda k: ir.Call(operator.getitem, (seq, k))
        seq = self.flatten(self.converter.convert(it))
        steps = self.flatten(ir.Call(range, (ir.Call(len, (seq,)),)), self.names.fresh("steps"))
        return steps, lambda k: ir.Call(operator.getitem, (seq, k))

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
        if not (isinstance(array, ir.Var) and array.name in self.buffers):
            name = target.value.id
            raise self.parsed.error(
                f"an assignment into {name}[...]", f"{name} is not an array this function created (an argument, "
                f"or a view of one), and writing into it would change the caller's data; copy it first: "
                f"{name} = {name}.copy()", target)
        index = self.flatten(self.converter.convert(target.slice))
        self.block.append(ir.Store(array.name, index, self.flatten(value), self.line))

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
        if isinstance(expr, _Choice):
            return self._choice(expr, name)
        if isinstance(expr, _Inline):
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
        target = self.names.fresh(self._describe(call)) if name is None else name
        self.block.append(ir.Assign(target, call, self.line))
        if rules.makes_fresh_array(expr.fn):
            self.buffers.add(target)
        return ir.Var(target)

    def inline(self, call: _Inline) -> ir.Expr:
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
        args = [self.flatten(a) for a in call.args]
        body = copy.deepcopy(node.body)
        function = gast.FunctionDef(name=node.name, args=node.args, body=body, decorator_list=[], returns=None,
                                    type_comment=None)
        own = _stored_names(function) | set(params)
        desugar(function, own | set(self.reads) | self.names.taken)
        inner_env = {k: v for k, v in self.env.items() if k not in own}
        inner_env.update(zip(params, args))
        outer_env, outer_reads, self.env = self.env, self.reads, inner_env
        self.reads = Counter(n.id for n in gast.walk(function) if isinstance(n, gast.Name)
                             and isinstance(n.ctx, gast.Load))
        self.inlining.add(node.name)
        try:
            for stmt in function.body[:-1]:
                self.line = stmt.lineno
                self.statement(stmt)
            result = self.flatten(self.converter.convert(function.body[-1].value))
        finally:
            self.inlining.discard(node.name)
            self.env, self.reads = outer_env, outer_reads
        return result

    def _choice(self, choice: _Choice, name: Optional[str]) -> ir.Expr:
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

    def _short(self, expr: ir.Expr) -> Optional[str]:
        if isinstance(expr, ir.Var) and expr.name in self.user_names:
            return expr.name
        if isinstance(expr, ir.Const) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
            value = expr.value
            if float(value).is_integer() and 0 <= value < 100:
                return str(int(value))
        return None

    def _describe(self, call: ir.Call) -> str:
        """A readable name for the value ``call`` makes: x_plus_1, x_sq, sin_x."""
        fn, args = call.fn, call.args
        shorts = [self._short(a) for a in args]
        squares = (fn is operator.pow and ir.is_const(args[1], 2)) or (fn is operator.mul and args[0] == args[1])
        if squares and shorts[0]:
            return f"{shorts[0]}_sq"
        if fn in _OP_WORDS:
            word, noun = _OP_WORDS[fn]
            if all(shorts) and len(args) == 2:
                name = f"{shorts[0]}_{word}_{shorts[1]}"
                if len(name) <= _NAME_LIMIT:
                    return name
            return noun
        if fn is operator.neg:
            return f"neg_{shorts[0]}" if shorts[0] else "neg"
        if fn is operator.getitem:
            return f"{shorts[0]}_part" if shorts[0] else "part"
        base = getattr(fn, "__name__", "value").lstrip("_") or "value"
        if shorts and shorts[0] and len(base) + len(shorts[0]) < _NAME_LIMIT:
            return f"{base}_{shorts[0]}"
        return base


def lower(parsed: ParsedFunction) -> ir.Function:
    """Lower a parsed function to SSA form (see the module docstring)."""
    return Lowering(parsed).run()


_TEMPLATE_IR: dict[int, tuple[rules.Rule, tuple]] = {}


def _template_ir(rule: rules.Rule) -> tuple[tuple[str, ir.Expr], ...]:
    params = set(rule.inputs) | {rule.result} | set(rule.seeds)
    local: set[str] = set()

    def lookup(name: str) -> Optional[ir.Expr]:
        return ir.Var(name) if name in params or name in local else None

    def error(construct: str, hint: str, node: Any) -> TransformError:
        return TransformError(construct, hint, filename=rule.filename, line=getattr(node, "lineno", 0) + rule.line - 2)

    converter = ExpressionConverter(lookup, Resolver(rule.namespace, {}), error, check_calls=False)
    statements = []
    for stmt in rule.body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            raise error("a statement in a rule", "a rule body holds only assignments name = expression", stmt)
        statements.append((stmt.targets[0].id, converter.convert(stmt.value)))
        local.add(stmt.targets[0].id)
    return tuple(statements)


def template_ir(rule: rules.Rule) -> tuple[tuple[str, ir.Expr], ...]:
    """The rule's body as ``(name, IR tree)`` pairs, names as in the template."""
    cached = _TEMPLATE_IR.get(id(rule))
    if cached is None or cached[0] is not rule:
        cached = _TEMPLATE_IR[id(rule)] = (rule, _template_ir(rule))
    return cached[1]
