"""Stage 2: gast → SSA three-address IR.

Input: a ``ParsedFunction`` (its body already checked against the subset).
Output: an ``ir.Function`` satisfying the SSA invariants of ``ir.py``: one
operation per statement, every value named once, constants inline, names
derived from the user's (``a``, ``a_1`` for a reassigned ``a``, ``x_sq`` for
``x ** 2``, ``sin_x`` for ``np.sin(x)``).  Plain copies (``a = x``) and
constant assignments do not become statements: later reads use the copied
value directly.

Expressions are first converted to IR trees by ``expressions.py``; this
module is the driver: it turns statements (assignments, ``if``, loops,
returns, raises, effects) into SSA statements, with the parts that each do
one job (``naming.py`` chooses the names):

* ``lower_ssa``: an expression's tree flattened into statements;
* ``lower_containers``: containers as static records;
* ``lower_writes``: stores, in-place updates, ``np.add.at``, and the views
  they show through, consulting the memory model's record of each name's
  views (``memory.views``), with its parts ``lower_views`` (views read after
  a write and written through) and ``lower_updates`` (``x op= v``);
* ``lower_joins``: the merge variables at the joins of ifs and loops;
* ``lower_calls``: the user's functions inlined at their calls;
* ``lower_control``: blocks, ifs and loops (the statements within them
  lowered by this driver);
* ``lower_loops``: what a for loop walks;
* ``lower_scan``: what a block of the user's code binds and reads;
* ``lower_state``: the state they share, and the body being lowered
  (``Scope``, replaced as one object while a call is inlined).

Each part imports only parts before it in the order scan, state, ssa,
containers, view_facts, views, updates, writes, loops, joins, calls,
control (``tests/lowering/test_ssa.py`` checks it);
where lowering recurses upward (a call whose body holds statements, a view
taken again under its name), a part calls the driver through
``lower_state.Lowerer``.

Containers (dicts with constant keys, lists and tuples, namedtuples,
dataclasses, objects) are static here: a ``Record`` of IR values, never a
value of the generated code.  A container parameter is one parameter per
leaf (``params_w``); loops over a container are unrolled; an ``if`` or loop
joins a container item by item; a user function given a container is
inlined.  See ``containers.py``.
"""
from __future__ import annotations

import operator
from collections import Counter
from typing import Any, Optional

import gast
from ..core import containers, ir, runtime
from ..core.kinds import Opaque
from ..memory.sharing import returns_shared
from .desugar import desugar
from .expressions import Bound, Dispatch, ExpressionConverter, Inline, Known, Nested, Record, is_user_function
from .function_values import Functions, computed_now, function_appended, function_value
from .lower_calls import CallLowering
from .lower_containers import ContainerLowering
from .lower_control import ControlFlowLowering
from .lower_joins import JoinLowering
from .lower_loops import LoopIteration
from .lower_scan import is_append, names_read, reads_among
from .lower_ssa import SSABuilder
from .lower_state import LoweringState, Part
from .lower_writes import WriteLowering
from ..frontend.attribute_stores import ORIGINAL
from ..frontend.shared_updates import Store
from ..frontend.list_sharing import stores_into_a_list
from ..frontend.parse import ParsedFunction, parse_function, updated_parameters


# code object of a user's function -> whether it may return an argument (or a view of one)
_RETURNS_SHARED: dict[Any, bool] = {}


def helper_returns_shared(fn: Any) -> bool:
    """True if the user's function ``fn`` may return one of its arguments or a view of one (then
    the caller's later writes into that argument show through the result).  Found by lowering
    ``fn`` and asking the may-alias analysis; unknown (recursion, a refusal) counts as may."""
    code = getattr(fn, "__code__", None)
    if code in _RETURNS_SHARED:
        return _RETURNS_SHARED[code]
    _RETURNS_SHARED[code] = True  # while it is analysed (a recursive helper), assume the worst
    try:
        shares = returns_shared(lower(parse_function(fn)))
    except Exception:  # noqa: BLE001 -- a helper s2s_ad cannot read: assume the worst
        shares = True
    _RETURNS_SHARED[code] = shares
    return shares


def _an_object(value: Any) -> bool:
    """An object of the user's class (or a dataclass's) while lowering."""
    return isinstance(value, Record) and value.kind in ("object", "dataclass")


def _holds_a_function(value: Any) -> bool:
    """A function, or a display holding one at any depth (an unrolled ``enumerate(zip(fs, ws))``'s item)."""
    if isinstance(value, ir.Display):
        return any(_holds_a_function(item) for item in value.items)
    return isinstance(value, (Nested, Known, Bound))


class Lowering(Part):
    """Flattens one function body into SSA statements, block by block: the driver that owns the parts
    (see the module docstring) and implements ``Lowerer`` for them."""

    def __init__(self, parsed: ParsedFunction, structures: Optional[dict] = None, has_aux: bool = False,
                 inline_helpers: bool = False, inline_small_helpers: bool = False,
                 inline_view_helpers: bool = False) -> None:
        node, nodes = parsed.node, parsed.nodes  # the nodes as parsed: no walk of the tree needed
        rewritten = desugar(node, {n.id for n in nodes if isinstance(n, gast.Name)} | set(parsed.params),
                            Counter(type(n) for n in nodes))
        reads = Counter(names_read(node) if rewritten else reads_among(nodes))
        super().__init__(LoweringState(parsed, reads, structures or {}, has_aux, helper_returns_shared))
        self.state.host = self
        if getattr(node, "exit_result", None):
            self.state.exit_results.add(node.exit_result)
        self.state.inline_helpers = inline_helpers
        self.state.inline_small_helpers = inline_small_helpers
        self.state.inline_view_helpers = inline_small_helpers or inline_view_helpers
        self.ssa = SSABuilder(self.state)
        self.containers = ContainerLowering(self.state, self.ssa)
        self.writes = WriteLowering(self.state, self.ssa)
        self.joins = JoinLowering(self.state, self.containers, self.writes)
        self.calls = CallLowering(self.state, self.ssa, self.containers, self.joins)
        self.loops = LoopIteration(self.state, self.ssa)
        self.control = ControlFlowLowering(self.state, self.ssa, self.joins, self.loops, self.writes)
        self.state.converter = ExpressionConverter(self.writes.read, parsed.resolver, parsed.error)
        self.result_name: Optional[str] = None  # (set by run)

    def run(self) -> ir.Function:
        node = self.state.parsed.node
        params: list[str] = []
        owners: list[str] = []
        for p in self.state.parsed.params:
            if isinstance(self.state.structures.get(p), containers.Static):
                # a string (or None) the code is specialised on: a parameter still, read as its value
                params.append(self.state.names.claim(p))
                owners.append(p)
                value = self.state.structures[p].value  # (a function: static too, called where it is called)
                self.scope.env[p] = Known(value) if callable(value) and not self.state.generated else ir.Const(value)
                continue
            if isinstance(self.state.structures.get(p), Opaque):  # an object read whole: unknown, as any other
                name = self.state.names.claim(p)
                self.scope.env[p] = ir.Var(name)
                self.state.user_names.add(name)
                self.state.converter.opaque[name] = self.state.structures[p]
                params.append(name)
                owners.append(p)
                continue
            if p in self.state.structures:  # a container: one parameter per leaf, the container static
                leaves: list[str] = []
                self.scope.env[p] = self.containers.record_of(self.state.structures[p], p, leaves)
                self.state.groups[p] = leaves
                owners += [p] * len(leaves)
                params += leaves
                continue
            name = self.state.names.claim(p)
            self.scope.env[p] = ir.Var(name)
            self.state.user_names.add(name)
            params.append(name)
            owners.append(p)
        self.state.params = dict(zip(params, owners))
        last = node.body[-1] if node.body else None
        # the name the function's result is bound to (each arm of an if, after desugar.py): with has_aux,
        # a pair bound to it is a record (lower_containers.result_pair)
        self.result_name = last.value.id if isinstance(last, gast.Return) and isinstance(last.value, gast.Name) \
            else None
        body = self.control.lower_block(node.body)
        if self.scope.raised:  # it always raises: the forward sweep stops there, this return is never reached
            body.append(ir.Return(ir.Const(0.0), self.state.line))
        docstring = gast.get_docstring(node) if hasattr(gast, "get_docstring") else None
        return ir.Function(node.name, params, body, self.state.parsed.filename, node.lineno, docstring,
                           in_place=self.state.in_place, element_reads=self.state.element_reads,
                           refused_reads=self.state.refused_reads, writes_into_copies=self.state.writes_into_copies,
                           groups=self.state.groups, result_tree=self.state.result_tree, aux=self.state.aux,
                           aux_tree=self.state.aux_tree)

    def statement(self, stmt: Any) -> None:
        self.state.computed.clear()
        self.state.inlined_here = 0
        if isinstance(stmt, gast.Assign):
            original = getattr(stmt, ORIGINAL, None)
            if original is not None and not _an_object(self.scope.env.get(stmt.value.func.value.id)):
                self.statement(original)  # lst.append(v) of a list a call made: as written (attribute_stores.py)
                return
            # h = act, act = np.tanh, layers = [relu, np.tanh]: h names the same function (a factory's result,
            # as desugar.py returns it, too), or the display the functions
            if getattr(stmt.value, "writes_out", None) is not None:  # c[...] = np.exp(g): out=c (sugar.py)
                self.bind(stmt.targets[0], self.writes.result_into_out(stmt.value, stmt.targets[0]))
                return
            value = function_value(self.state.converter, stmt.value)
            if isinstance(value, Functions):  # layers = [(np.tanh, 0.5 * s)]: its numbers computed here
                value = computed_now(value, self.ssa.flatten)
            if value is None:
                value = self.state.converter.convert(stmt.value)
            for target in stmt.targets:
                self.bind(target, value)
        elif isinstance(stmt, gast.AugAssign):
            self.writes.augmented(stmt)
        elif is_append(stmt):  # lists grow by a pure append: items = items + [item]
            call = stmt.value
            functions = function_appended(self.state.converter, call)
            if functions is not None:  # fs.append(lambda v, k=k: v * k): a longer list of functions
                self.scope.env[call.func.value.id] = computed_now(functions, self.ssa.flatten)
                return
            items = self.state.converter.convert(call.func.value)
            item = self.state.converter.convert(call.args[0])
            if _an_object(item) or (isinstance(items, Record) and any(map(_an_object, items.items))):
                # layers.append(Layer(w)) in straight-line code or a loop unrolled (lower_loops.known_items)
                self.scope.env[call.func.value.id] = self.containers.appended(items, item, call)
                return
            self.bind(gast.Name(id=call.func.value.id, ctx=gast.Store(), annotation=None, type_comment=None),
                      ir.Call(runtime.list_append, (items, item)))
        elif isinstance(stmt, gast.Return):
            self.ret(stmt)
        elif isinstance(stmt, gast.If):
            self.control.if_statement(stmt)
        elif isinstance(stmt, gast.For):
            self.control.for_loop(stmt)
        elif isinstance(stmt, gast.While):
            self.control.while_loop(stmt)
        elif isinstance(stmt, gast.FunctionDef):
            self.scope.env[stmt.name] = Nested(stmt)
        elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
            if self.writes.adds_at(stmt.value):
                self.writes.add_at(stmt.value, stmt)
                return
            if self.updates_its_arguments(stmt.value):  # normalise(b): a helper that updates b in place
                self.ssa.flatten(self.state.converter.convert(stmt.value))
                return
            self.effect(self.state.converter.effect(stmt.value))
        elif isinstance(stmt, gast.Raise):
            # One a constant test removes (``else: raise ValueError(...)`` after ``if KIND == "relu"``
            # on a module-level option) is dropped with its branch; one that may run raises the user's
            # exception in the forward sweep, as the primal function would (desugar.py guards what follows).
            self.effect(self._raised(stmt))
            self.scope.raised = True
        elif isinstance(stmt, gast.Assert):
            message = ir.Const(None) if stmt.msg is None else self.state.converter.convert(stmt.msg)
            self.effect(ir.Call(runtime.check_assertion, (self.state.converter.convert(stmt.test), message)))
        # Pass and the docstring need nothing.

    def _raised(self, stmt: gast.Raise) -> ir.Call:
        """``raise Error(args)`` or ``raise Error`` as the effect ``raise_exception(Error, args)``, where
        ``Error`` is an exception class the function can see; anything else is refused at its line."""
        exc = stmt.exc
        call = exc if isinstance(exc, gast.Call) else None
        kind = self.state.converter.resolve(call.func if call is not None else exc) if exc is not None else None
        if not (isinstance(kind, type) and issubclass(kind, BaseException)) or (
                stmt.cause is not None and not (isinstance(stmt.cause, gast.Constant) and stmt.cause.value is None)):
            raise self.state.parsed.error("this raise statement", "raise an exception class by name, as in "
                                          "raise ValueError(f\"unknown {kind}\") (a bare raise needs try/except, "
                                          "which is not supported)", stmt)
        if call is None:
            return ir.Call(runtime.raise_exception, (ir.Const(kind),))
        if any(k.arg is None for k in call.keywords) or any(isinstance(a, gast.Starred) for a in call.args):
            raise self.state.parsed.error("*args or **kwargs in a call", "pass the arguments one by one", call)
        convert = self.state.converter.convert
        return ir.Call(runtime.raise_exception, (ir.Const(kind),) + tuple(convert(a) for a in call.args),
                       tuple((k.arg, convert(k.value)) for k in call.keywords))

    # -- assignments -------------------------------------------------------

    def inline(self, call: Inline, callee: Optional[ParsedFunction] = None) -> ir.Expr:
        """A call of the user's function, lowered in place (``lower_calls``)."""
        return self.calls.inline(call, callee)

    def read_now(self, value: ir.Var) -> ir.Expr:
        return self.writes.current(value)

    def made(self, name: str, value: Any) -> None:
        self.writes.emitted(name, value)

    def passes_written(self, call: ir.Call) -> bool:
        return self.writes.passes_written(call)

    def store_through_view(self, view: ir.Var, target: Any, value: ir.Expr) -> bool:
        return self.writes.retaking.store_through_view(view, target, value)

    def bind(self, target: Any, value: Any) -> None:
        """Assign ``value`` (an IR tree, a record, a def) to the gast ``target``: a user's name is bound
        to the atom holding it (a new SSA name where it is computed), a subscript is a store (into an
        array, or a dict's item), a tuple unpacks it."""
        if isinstance(target, gast.Subscript):
            if stores_into_a_list(target):  # items[i] = v: items a list the function made, no one else holds
                replaced = self.containers.store_list_item(target, value)
                if replaced is not None:
                    self.bind(gast.Name(id=target.value.id, ctx=gast.Store(), annotation=None, type_comment=None),
                              replaced)
                return
            if isinstance(self.scope.env.get(target.value.id), Record):
                self.containers.store_item(target, value)  # d["k"] = v: a new record
            else:
                self.writes.store(target, value)
            return
        made = False
        if isinstance(target, gast.Name):
            shown = self.containers.of_containers(value)
            made, value = shown is not value, shown
            if self.state.has_aux and target.id == self.result_name and not self.calls.inlining:
                value = self.containers.result_pair(value)
        if isinstance(value, Record) or (isinstance(value, ir.Display) and any(isinstance(i, Record)
                                                                              for i in value.items)):
            value = self.containers.settle(value)
            if isinstance(target, gast.Name):
                if made and isinstance(value, Record):  # layers = [(W1, b1), ...]: see as_shown
                    self.containers.shown.add(value)
                self.containers.note_sharing(target.id, value)
                self.scope.env[target.id] = value
                return
            kind = value.cls.__name__
            if isinstance(value, Record) and value.kind in ("object", "dataclass"):  # a, b = obj: its __iter__'s
                value, kind = self.state.converter.calls.protocols.iterated(value, target), f"{kind} (its __iter__'s)"
            if not value.sequence or len(value.items) != len(target.elts):
                raise self.state.parsed.error("an unpacking of a container", f"{len(value.items)} items of a "
                                              f"{kind} into {len(target.elts)} names", target)
            for element, item in zip(target.elts, value.items):
                self.bind(element, item)
            return
        if isinstance(target, gast.Name):
            if isinstance(value, Inline) and value.factory:  # act = make_act(0.1): the function it returns
                value = self.calls.made_function(value)
            if isinstance(value, Bound):  # g = functools.partial(f, x[0]): its arguments computed now
                value = Bound(value.function, tuple(self.calls.computed_now(a) for a in value.args),
                              tuple((k, self.calls.computed_now(v)) for k, v in value.kwargs))
            if ir.is_atom(value) or isinstance(value, (Nested, Dispatch, Known, Bound, Functions)):  # h = g: the same def
                self.scope.env[target.id] = value
                return
            name = self.state.names.claim(target.id)
            self.state.user_names.add(name)
            self.scope.env[target.id] = self.ssa.flatten(value, name)
            self.writes.bound(target.id, name, value)
            return
        # Tuple unpacking: a display binds element-wise, anything else by index.
        elements = target.elts
        if isinstance(value, ir.Display) and len(value.items) == len(elements) and _holds_a_function(value):
            for element, item in zip(elements, value.items):  # for f, w in zip(acts, ws), unrolled: f a function
                self.bind(element, item)
            return
        if isinstance(value, ir.Display) and len(value.items) == len(elements):
            items = [self.ssa.flatten(v) for v in value.items]  # evaluate all before binding any
            for item, given in zip(items, value.items):
                if isinstance(item, ir.Var) and item != given and not self.state.generated:  # b[2:], B[0]: a view
                    self.writes.bound_item(item.name, given)
            for element, item in zip(elements, items):
                if isinstance(element, gast.Subscript) and isinstance(item, ir.Var):
                    # b[:2], b[2:] = b[2:], b[:2]: the second store reads its view after the first wrote
                    item = self.writes.view_now(item, f"the value stored into {element.value.id}[...]", user=False)
                self.bind(element, item)
            return
        if isinstance(value, ir.Display):
            raise self.state.parsed.error("an unpacking of the wrong length",
                                          f"{len(value.items)} values into {len(elements)} names", target)
        whole = self.ssa.flatten(value)
        for i, element in enumerate(elements):
            self.bind(element, ir.Call(operator.getitem, (whole, ir.Const(i))))
            bound = self.scope.env.get(element.id) if isinstance(element, gast.Name) else None
            if isinstance(bound, ir.Var):  # an item of a tuple, not a view
                self.writes.unpacked(bound.name, whole.name if isinstance(whole, ir.Var) else bound.name)

    def updates_its_arguments(self, call: gast.Call) -> bool:
        """``helper(b, c)`` as a statement, where ``helper`` is a function of the user's that updates a
        parameter in place (``argument_updates``): what it does to ``b`` is what matters, and the call
        is lowered as any call of it (in place where it is a helper the lowering inlines; otherwise an
        array given there is refused), its result dropped."""
        fn = self.state.converter.statics.resolve(call.func) if isinstance(call.func, gast.Name) else None
        return fn is not None and is_user_function(fn) and bool(updated_parameters(fn))

    def effect(self, call: ir.Call) -> None:
        """A call made for its effect (print, logging, assert): its arguments flattened, the call a
        statement of its own, which the derivative code keeps where the primal computation runs."""
        args = tuple(self.ssa.flatten(a) for a in call.args)
        kwargs = tuple((k, self.ssa.flatten(v)) for k, v in call.kwargs)
        self.state.block.append(ir.Effect(ir.Call(call.fn, args, kwargs), self.state.line))

    def ret(self, stmt: gast.Return) -> None:
        value = self.state.converter.convert(stmt.value)
        if isinstance(value, ir.Call) and self.ssa.makes_record(value):  # return Vector(x).shrunk(): a container
            value = self.ssa.flatten(value)
        value = self.containers.as_shown(value)
        if self.state.has_aux:
            value = self.containers.split_aux(value, stmt)
        if isinstance(value, Record) or (isinstance(value, ir.Display) and any(isinstance(i, Record)
                                                                              for i in value.items)):
            leaves: list = []
            self.state.result_tree = self.containers.tree_of(self.containers.settle(value), leaves)
            value = ir.Display("tuple", tuple(leaves))
        if isinstance(value, ir.Display):  # a tuple result is one value, made by a display
            value = self.ssa.materialise(self.ssa.flatten_items(value), "out")
        name = None if ir.is_atom(value) else self.state.names.fresh("out")
        self.state.block.append(ir.Return(self.ssa.flatten(value, name), self.state.line))


def lower(parsed: ParsedFunction, structures: Optional[dict] = None, has_aux: bool = False,
          inline_helpers: bool = False, inline_small_helpers: bool = False, inline_view_helpers: bool = False,
          stores: frozenset[Store] = frozenset()) -> ir.Function:
    """Lower a parsed function to SSA form (see the module docstring).  ``structures`` gives the
    containers.Tree of each container parameter (a ``containers.Static``: the parameter's value, a
    string the code is specialised on); ``has_aux``: the function returns ``(value, aux)``;
    ``inline_helpers``: the user's helpers are lowered in place of their calls (a target whose code
    cannot thread a tape through calls asks for it: ``Capabilities.inlines_helpers``);
    ``inline_small_helpers``: only the short ones (``lower_ssa.small_helper``), the others stay calls;
    ``inline_view_helpers`` (implied by ``inline_small_helpers``): those that may hand back views of an
    array the function writes into (``SSABuilder.hands_views_of_written``).  ``stores``: the updates
    ``b op= v`` of a helper lowered in place (its file, line and column) to lower as the store
    ``b[...] = b op v`` (``pipeline.lowered``: the argument kinds prove an array other names hold)."""
    lowering = Lowering(parsed, structures, has_aux, inline_helpers, inline_small_helpers, inline_view_helpers)
    lowering.state.stores = stores
    try:
        return lowering.run()
    finally:
        lowering.state.release()


