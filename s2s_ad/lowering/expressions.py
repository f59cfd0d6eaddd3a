"""gast expressions → IR expression trees, every name resolved.

Input: a gast expression and a way to look names up (the local variables in
scope, then the globals, closure cells and builtins of the function).
Output: an IR tree (``ir.Call`` of the callable itself, recognised by
identity; ``ir.Const`` for numbers and arrays) or, for constructs that need
statements, a pending node that ``lower.py`` expands: ``Choice`` (a
conditional expression, ``and``/``or``) and ``Inline`` (a call of a nested
function); a container with a static structure is a ``Record``
(``conversion.py`` defines them).  Calls are checked here: a function with no
rule and no readable source is refused with a hint.

``ExpressionConverter`` converts operators, names, attributes, subscripts and
displays itself, and hands the rest to its parts:
``static_names.StaticNames`` resolves what names, attribute chains and
constant-keyed items of globals mean while lowering,
``conditions.ConditionConverter`` converts comparisons, ``and``/``or`` and
conditional expressions, ``records.RecordReader`` reads dict displays and the
items and attributes of records, and ``calls.CallConverter`` converts calls
(``callables.py`` says what a callable is, and which calls are refused).

``lower.py`` flattens these trees for user code; ``template_ir`` uses them,
unflattened, for the bodies of rule templates, and ``fold_declared`` folds the
helpers those templates call.
"""
from __future__ import annotations

import ast
import inspect
import operator
import textwrap
from typing import Any, Callable, Optional, Union

import gast
from ..core import containers, ir, language, runtime
from ..rules import registry as rules
from ..rules.rule import Rule
from ..frontend.callables import describe_callable, is_user_function, library_code, missing_rule
from .calls import CallConverter, maybe_object
from .conditions import COMPARISONS, ConditionConverter
from .function_values import Functions
from .records import RecordReader
from ..frontend.conversion import (Bound, Choice, Dispatch, Inline, Known, MethodCall, Nested, Once, Pending, Record,
    is_plain_constant, spelled)
from ..core.errors import TransformError
from ..core.identity import IdentityMap
from ..core.kinds import Opaque
from ..frontend.parse import Resolver
from ..frontend.static_names import StaticNames

# (lower.py, the generators and the analysis import the pending nodes and what is said of callables from here)
__all__ = ["BINARY_OPERATORS", "COMPARISONS", "UNARY_OPERATORS", "Bound", "Choice", "Dispatch", "ExpressionConverter",
           "Inline", "Known", "Nested", "Once", "Record", "describe_callable", "fold_declared", "instantiate",
           "is_user_function", "library_code", "missing_rule", "template_ir"]

BINARY_OPERATORS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
    gast.Pow: operator.pow, gast.MatMult: operator.matmul,
    # Bitwise operators combine masks (``(x > 0) & (x < 1)``, ``~mask``): no derivative, but they run.
    gast.BitAnd: operator.and_, gast.BitOr: operator.or_, gast.BitXor: operator.xor,
}
UNARY_OPERATORS: dict[type, Callable[..., Any]] = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
                   gast.Invert: operator.invert}


class ExpressionConverter:
    """Turns gast expressions into IR trees, resolving every name it meets.

    ``local`` maps a name to the IR value it currently holds, or ``None`` if
    the name is not local; ``error`` builds a located ``TransformError``.
    """

    def __init__(self, local: Callable[[str], Any], resolver: Resolver,
                 error: Callable[[str, str, Any], TransformError], check_calls: bool = True) -> None:
        """``check_calls`` is False for rule templates, which may call anything (runtime helpers)."""
        self.check_calls = check_calls
        self.local = local
        self.resolver = resolver
        self.error = error
        self.statics = StaticNames(self)
        self.calls = CallConverter(self, self.statics)
        self.conditions = ConditionConverter(self, self.statics)
        self.records = RecordReader(self, self.statics, self.calls)
        # parameters holding objects whose attributes cannot be read (kinds.Opaque): their names -> kinds
        self.opaque: dict[str, Opaque] = {}

    def refuse_opaque(self, value: Any, what: str, node: Any) -> None:
        """Refuse ``what`` (an attribute or method) of a parameter holding an object whose attributes
        cannot be read, saying why (``kinds.Opaque``); nothing for other values."""
        kind = self.opaque.get(value.name) if isinstance(value, ir.Var) else None
        if kind is not None:
            raise self.error(f"{what} of {value.name}, an object of the class {kind.cls.__name__} passed as an argument",
                             f"{kind.reason}, so its attributes cannot be read as a record; make it a dataclass, "
                             "or a class whose __init__ assigns its attributes, or pass the numbers it holds "
                             "as arguments", node)

    def convert(self, node: Any) -> ir.Expr:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"the expression {type(node).__name__}", "rewrite it with simpler expressions", node)
        return method(node)

    def _Constant(self, node: gast.Constant) -> ir.Expr:
        self._refuse_complex(node.value, repr(node.value), node)
        return ir.Const(node.value)

    def _refuse_complex(self, value: Any, spelled: str, node: Any) -> None:
        """Refuse a complex constant: the rules are written for real values (``arguments``' module
        docstring says what they would give on complex ones)."""
        if language.is_complex_value(value):
            raise self.error(f"the complex value {spelled}", "s2s_ad's rules are written for real values; "
                             "write the real and imaginary parts as two real values and the complex "
                             "arithmetic on them", node)

    def _Name(self, node: gast.Name) -> Any:
        value = self.local(node.id)
        if isinstance(value, (Nested, Known, Bound)):
            raise self.error(f"the function {node.id!r} used as a value", "call it, or pass it straight to a "
                             "function of yours as an argument", node)
        if isinstance(value, Functions):
            raise self.error(f"the {value.shown} of functions {node.id!r} used as a value", "loop over it "
                             f"(for f in {node.id}: ...) or call an item by a constant index or key "
                             f"({node.id}[0](x), {node.id}['tanh'](x))", node)
        if value is not None:
            return value
        return self._global_value(node.id, self.statics.lookup(node), node)

    def _global_value(self, name: str, value: Any, node: Any) -> Any:
        self._refuse_complex(value, repr(name), node)
        if is_plain_constant(value):
            return ir.Const(value)
        if language.is_array_value(value):
            ir.name_constant(value, name)  # (generated code calls it by the user's name)
            return ir.Const(value)
        table = self.statics.constant_table(value)
        if table is not None:  # sorted(D), for k in D, len(COEF): a module-level dict or list of numbers
            return table
        held = self.statics.global_object(value)
        if held is not None:  # CALC.k, CALC.method(x): a module-level object of your class, read as it is now
            return held
        held = self.statics.objects_table(value)
        if held is not None:  # for layer in LAYERS: a module-level list of objects of your classes
            return held
        if containers.user_object(value):
            reason = containers.unreadable_class(type(value)) or f"{type(value).__name__} objects have no __dict__"
            raise self.error(f"the module-level {type(value).__name__} object {name}", f"{reason}, so its "
                             "attributes cannot be read as a record; make it a dataclass, or a class whose "
                             "__init__ assigns its attributes, or pass the numbers it holds as arguments", node)
        raise self.error(f"the value of {name!r} ({type(value).__name__})",
                         "only numbers and arrays can be used as values; a function is called, bound to a name "
                         "(act = np.tanh) or held in a list, tuple or dict of functions (or of tuples of a function "
                         "and numbers: [(np.tanh, 1.5), (np.sin, 0.5)]), walked by a loop or called by a constant "
                         "index", node)

    def _UnaryOp(self, node: gast.UnaryOp) -> ir.Expr:
        operand = self.convert(node.operand)
        fn = UNARY_OPERATORS.get(type(node.op))
        if fn is None:
            raise self.error(f"the operator {type(node.op).__name__}", "use arithmetic", node)
        if _is_object(operand):  # -v: Vector.__neg__
            return self.calls.objects.operator_method(fn, operand, None, node)
        if fn is operator.neg and isinstance(operand, ir.Const) and isinstance(operand.value, (int, float)):
            return ir.Const(-operand.value)
        if fn is operator.not_ and isinstance(operand, ir.Const) and isinstance(operand.value, (bool, str, type(None))):
            return ir.Const(not operand.value)  # structure (not returned, after a branch a constant chose)
        return ir.Call(fn, (operand,))

    def _BinOp(self, node: gast.BinOp) -> ir.Expr:
        fn = BINARY_OPERATORS.get(type(node.op))
        if fn is None:
            raise self.error(f"the operator {type(node.op).__name__}", "use np.left_shift/np.right_shift", node)
        left, right = self.convert(node.left), self.convert(node.right)
        if isinstance(node.op, gast.Mod) and isinstance(left, ir.Const) and isinstance(left.value, str):
            return ir.Call(runtime.percent_formatted, (left, right))  # "%.6f" % v: a string, no modulo
        if (_is_object(left) or _is_object(right)) and not (maybe_object(left) or maybe_object(right)):
            return self.calls.objects.operator_method(fn, left, right, node)  # Vector(a) + Vector(b): Vector.__add__
        # (an operand a method gives back, v * 2.0 + w, is known once lowered: SSABuilder.object_operator)
        return ir.Call(fn, (left, right))

    def _Compare(self, node: gast.Compare) -> Any:
        return self.conditions.compare(node)

    def _Tuple(self, node: gast.Tuple) -> ir.Expr:
        return ir.Display("tuple", tuple(self.convert(e) for e in node.elts))

    def _List(self, node: gast.List) -> ir.Expr:
        return ir.Display("list", tuple(self.convert(e) for e in node.elts))

    def _Slice(self, node: gast.Slice) -> ir.Expr:
        parts = (node.lower, node.upper, node.step)
        return ir.Slice(*(None if p is None else self.convert(p) for p in parts))

    def _Subscript(self, node: gast.Subscript) -> ir.Expr:
        joined = self._index_call(node)
        if joined is not None:
            return joined
        found, item = self.statics.item(node)
        if found:  # COEF[1], CONFIG["scale"]: a module-level list or dict of numbers, read now
            return self._global_value(f"{spelled(node.value)}[...]", item, node)
        value, index = self.convert(node.value), self.convert(node.slice)
        if isinstance(value, Record):
            return self.record_item(value, index, node)
        return ir.Call(operator.getitem, (value, index))

    def _index_call(self, node: gast.Subscript) -> Optional[ir.Expr]:
        """``np.r_[a, b]``, ``np.c_[a, b]``: an object indexed to build an array, declared
        ``index_call=`` in templates/, is a call of the function declared on the list of the items;
        None for other subscripts."""
        if not isinstance(node.value, (gast.Attribute, gast.Name)):
            return None
        found, obj = self.statics.static(node.value)
        helper = rules.fact(obj, "index_call") if found else None
        if helper is None:
            return None
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        items = tuple(self.convert(p) for p in parts)
        if any(isinstance(i, ir.Slice) or (isinstance(i, ir.Const) and isinstance(i.value, str)) for i in items):
            spelled = ast.unparse(gast.gast_to_ast(node.value))
            raise self.error(f"{spelled}[...] with a slice or a directive string", "the items may be numbers and "
                             "arrays; write a range as np.arange(start, stop) or np.linspace(...), and join along "
                             "another axis with np.concatenate(..., axis=...)", node)
        return ir.Call(helper, (ir.Display("list", items),))

    def _Dict(self, node: gast.Dict) -> Record:
        return self.records.display(node)

    def record_item(self, record: Record, index: Any, node: Any) -> Any:
        """``record[index]`` (``records.py``)."""
        return self.records.record_item(record, index, node)

    def _IfExp(self, node: gast.IfExp) -> Any:
        return self.conditions.if_exp(node)

    def _BoolOp(self, node: gast.BoolOp) -> Any:
        return self.conditions.bool_op(node)

    def _Attribute(self, node: gast.Attribute) -> ir.Expr:
        found, value = self.statics.static(node)
        if found:
            return self._global_value(node.attr, value, node)
        base = self.convert(node.value)
        if isinstance(base, Record):
            return self.record_attribute(base, node.attr, node)
        self.refuse_opaque(base, f"the attribute .{node.attr}", node)
        fn = rules.attribute_function(node.attr)
        if fn is None and (maybe_object(base) or isinstance(base, Inline) and not base.factory):
            # Model(w).scaled(2.0).w, Circle.from_area(a).r: read once the object is known
            return ir.Call(MethodCall(node.attr, called=False), (base,))
        if fn is None and isinstance(base, ir.Const) and not is_plain_constant(base.value) \
                and not language.is_array_value(base.value):
            raise self.error(f"the attribute .{node.attr} of a {type(base.value).__name__} object", "s2s_ad reads "
                             "the attributes of self and of dataclasses, namedtuples and registered types "
                             "(s2s_ad.core.containers.register), not of other objects they hold; make it a dataclass, "
                             "or pass what you need as arguments", node)
        if fn is None:
            raise self.error(f"the attribute .{node.attr}", "only array attributes with a rule (.T, .shape, "
                             ".ndim, .size) can be read", node)
        return ir.Call(fn, (base,))

    def record_attribute(self, base: Record, attr: str, node: Any) -> Any:
        """``p.w`` of a record (``records.py``)."""
        return self.records.record_attribute(base, attr, node)

    def _JoinedStr(self, node: gast.JoinedStr) -> ir.Expr:
        """An f-string: a string, which carries no derivative (``runtime.formatted`` makes it as Python does)."""
        layout, values = [], []
        for part in node.values:
            if isinstance(part, gast.Constant):
                layout.append(part.value)
                continue
            spec = part.format_spec
            if spec is not None and not all(isinstance(v, gast.Constant) for v in spec.values):
                raise self.error("an f-string with a computed format", "write the format out", part)
            text = "".join(v.value for v in spec.values) if spec is not None else ""
            layout.append((part.conversion, text))
            values.append(self.convert(part.value))
        return ir.Call(runtime.formatted, (ir.Const(tuple(layout)),) + tuple(values))

    # -- what the parts do ----------------------------------------------------------------------

    def static(self, node: Any) -> tuple[bool, Any]:
        """What a name or attribute chain means where that is fixed while lowering (``static_names.py``)."""
        return self.statics.static(node)

    def resolve(self, node: Any) -> Any:
        """What a name or a chain of attributes of a global means (``LOG.info``), else None."""
        return self.statics.resolve(node)

    def _Call(self, node: gast.Call) -> Union[ir.Expr, Pending]:
        return self.calls.call(node)

    def effect(self, node: gast.Call) -> ir.Call:
        """A call made for its effect (``calls.py``)."""
        return self.calls.effect(node)


_TEMPLATE_IR: IdentityMap[Rule, tuple] = IdentityMap()


def _template_ir(rule: Rule) -> tuple[tuple[str, ir.Expr], ...]:
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


def template_ir(rule: Rule) -> tuple[tuple[str, ir.Expr], ...]:
    """The rule's body as ``(name, IR tree)`` pairs, names as in the template."""
    cached = _TEMPLATE_IR.get(rule)
    if cached is None:
        cached = _TEMPLATE_IR[rule] = _template_ir(rule)
    return cached


def template_operands(rule: Rule, bound: dict[str, Any], is_default: Callable[[Any], bool]) -> dict[str, ir.Expr]:
    """What a rule's template reads for each input of a call (``bind_arguments``'s ``bound``): the
    argument, a default as a constant, and for an elementwise rule a list or tuple written in the call
    (``np.arctan2([x, 1.0], a)``) as the array NumPy makes of it, which the template's arithmetic
    takes as an array (``x1 * x1`` of a list raises; ``2 * x1`` would repeat it)."""
    def operand(value: Any) -> ir.Expr:
        if is_default(value):
            return ir.Const(value.value)
        if rule.elementwise and isinstance(value, ir.Display):
            return ir.Call(language.asarray, (value,))
        return value
    return {name: operand(value) for name, value in bound.items()}


def instantiate(tree: ir.Expr, mapping: dict[str, ir.Expr]) -> ir.Expr:
    """A template's expression with its names replaced by the call's, and the helpers it calls
    folded where their declared ``folds`` says so for the constants they get."""
    return fold_declared(ir.substitute(tree, mapping))


def fold_declared(expr: ir.Expr) -> ir.Expr:
    """``expr`` with every call of a helper declared ``folds=`` (templates/) replaced by the
    simpler expression its fold chooses for the call's constant arguments:
    ``expand_reduced(m, 1, True)`` is ``m``, ``broadcast_reduced(g, a, None, False)`` is
    ``np.full(np.shape(a), g)``.  Calls whose deciding arguments are not constants stay."""
    return ir.transform(expr, _fold_call)


def _fold_call(expr: ir.Expr) -> Optional[ir.Expr]:
    if not isinstance(expr, ir.Call):
        return None
    choose = rules.fact(expr.fn, "folds")
    if choose is None:
        return None
    try:
        bound = inspect.signature(expr.fn).bind(*expr.args, **dict(expr.kwargs))
    except TypeError:
        return None  # (the call itself would raise: let it, at run time)
    bound.apply_defaults()
    arguments = {name: value if isinstance(value, (ir.Var, ir.Const, ir.Call, ir.Slice, ir.Display)) else ir.Const(value)
                 for name, value in bound.arguments.items()}
    constants = {}
    takes_unknown = getattr(choose, "takes_unknown", False)  # (it chooses for what is not known too)
    for name in inspect.signature(choose).parameters:
        value = arguments.get(name)
        if isinstance(value, ir.Const):
            constants[name] = value.value
        elif takes_unknown:
            constants[name] = rules.NOT_CONSTANT
        else:
            return None
    template = choose(**constants)
    if template is None:
        return None
    params, body = _fold_template(template)
    return ir.substitute(body, {name: arguments[name] for name in params})


_FOLD_TEMPLATES: dict[Any, tuple[tuple[str, ...], ir.Expr]] = {}


def _fold_template(template: Callable) -> tuple[tuple[str, ...], ir.Expr]:
    """A fold's template (a function whose body is ``return <expression>`` of its parameters) as
    its parameters' names and the expression's IR, read once."""
    cached = _FOLD_TEMPLATES.get(template)
    if cached is not None:
        return cached
    lines, first_line = inspect.getsourcelines(template)
    filename = inspect.getsourcefile(template) or "<template>"
    node = gast.parse(textwrap.dedent("".join(lines))).body[0]
    params = tuple(arg.id for arg in node.args.args)
    returned = node.body[-1]

    def error(construct: str, hint: str, where: Any) -> TransformError:
        return TransformError(construct, hint, filename=filename, line=getattr(where, "lineno", 1) + first_line - 1)

    if len(node.body) != 1 or not isinstance(returned, gast.Return) or returned.value is None:
        raise error("the body of a fold", "a fold's template is one line: return <expression>", returned)
    converter = ExpressionConverter(lambda name: ir.Var(name) if name in params else None,
                                    Resolver(template.__globals__, {}), error, check_calls=False)
    cached = _FOLD_TEMPLATES[template] = (params, converter.convert(returned.value))
    return cached


def _is_object(value: Any) -> bool:
    """An object of the user's own class or a dataclass (its operators are its class's methods)."""
    return isinstance(value, Record) and value.kind in ("object", "dataclass")
