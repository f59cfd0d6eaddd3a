"""Containers while lowering (stage 2, lower): static records of IR values.

Input: the converter's ``Record`` (a dict with constant keys, a list or tuple,
a namedtuple, dataclass or object; see ``containers.py``) and the user's
statements that read, write, join or return one.  Output: records whose items
are settled atoms (computed by ``lower_ssa``): a container is never a value
of the generated code.  A container parameter is one parameter per leaf
(``params_w``); a write ``d["k"] = v`` makes a new record under the same name,
refused where another name (or the caller) sees the same dict; at a join the
data items of a container become merge variables (``template``), its
structure (keys, strings, functions) must be the same on every path; a
returned container is a tuple of leaves and its ``containers.Tree``.  A
display of tuples or lists bound to a name (``layers = [(W1, b1), (W2, b2)]``),
and with ``has_aux`` a ``(value, aux)`` pair, become records too
(``of_containers``, ``result_pair``): their items keep their own shapes, and
they join item by item.
"""
from __future__ import annotations

import operator
from typing import Any, Iterator

import gast
from ..core import containers, ir, language, runtime
from ..core.identity import Identity, IdentitySet
from .expressions import Record
from .lower_ssa import SSABuilder
from .lower_state import LoweringState, Part


def _identifier(key: Any) -> str:
    """A key as part of a Python name: ``params["w 1"]`` gives ``params_w_1``."""
    text = "".join(c if c.isalnum() or c == "_" else "_" for c in str(key))
    return text or "item"


def _same(a: Any, b: Any) -> bool:
    """Whether two settled values are the same value (so a join needs no merge)."""
    if a is b:
        return True
    if isinstance(a, ir.Var) and isinstance(b, ir.Var):
        return a.name == b.name
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        try:
            return ir.value_key(a) == ir.value_key(b)
        except Exception:  # noqa: BLE001 (an array constant: compared by identity above)
            return False
    return False


class ContainerLowering(Part):
    """Static records: made, settled, written into by key, joined, returned."""

    def __init__(self, state: LoweringState, ssa: SSABuilder) -> None:
        super().__init__(state)
        self.ssa = ssa
        self.record_merges: set[str] = set()  # merge variables made for the items of joined containers
        self.shared_records: dict[str, set[str]] = {}  # names that may reach a dict other names reach too
        self.shown = IdentitySet()  # the records of_containers made of displays (and bind settled)

    def record_of(self, tree: Any, base: str, leaves: list[str]) -> Any:
        """The static record for a container parameter: a fresh parameter for each leaf (named after
        its keys: ``params_w``), constants for the items that are not data."""
        if isinstance(tree, containers.Static):
            return ir.Const(tree.value)
        if not isinstance(tree, containers.Tree):
            name = self.state.names.claim(base)
            self.state.user_names.add(name)
            leaves.append(name)
            return ir.Var(name)
        items = tuple(self.record_of(child, f"{base}_{_identifier(key)}", leaves)
                      for key, child in zip(tree.keys, tree.children))
        return Record(tree.kind, tree.cls, tree.keys, items)

    def settle(self, value: Any) -> Any:
        """``value`` with its computations emitted: an atom, or a record of settled items (the same
        record where it is settled already: identity tells which names share a dict)."""
        if isinstance(value, Record):
            items = tuple(self.settle(i) for i in value.items)
            if all(a is b for a, b in zip(items, value.items)):
                return value
            return Record(value.kind, value.cls, value.keys, items)
        if isinstance(value, ir.Display) and any(isinstance(i, Record) for i in value.items):
            return Record(value.kind, tuple if value.kind == "tuple" else list, tuple(range(len(value.items))),
                          tuple(self.settle(i) for i in value.items))
        return self.ssa.flatten(value)

    def of_containers(self, value: Any) -> Any:
        """``[(W1, b1), (W2, b2)]`` bound to a name: a list (or tuple) display whose items are all
        tuples or lists, one holding a value computed at run time, is a record of records, so that a
        loop over it is unrolled and its items may differ in shape; ``value`` itself otherwise."""
        if not isinstance(value, ir.Display) or self.state.generated:
            return value  # (s2s_ad's own code binds the tuples it returns: they stay tuples)
        inner = [i for i in value.items if isinstance(i, ir.Display)]
        if not inner or len(inner) != len(value.items):
            return value
        if all(isinstance(leaf, ir.Const) for item in inner for leaf in item.items):
            return value  # a table of numbers: one array (np.array(rows)), indexed at run time
        return _record(value, tuple(_record(i, i.items) for i in inner))

    def result_pair(self, value: Any) -> Any:
        """For ``has_aux=True``: ``result = (loss, (h, n))`` bound to the name the function returns
        (in each arm of an if, after ``desugar`` put each return in tail position) is a record, its
        tuples records too, so that the arms join item by item and the aux items keep their own
        shapes."""
        if not (isinstance(value, ir.Display) and value.kind == "tuple" and len(value.items) == 2) or all(
                isinstance(i, ir.Const) for i in value.items):
            return value

        def nested(item: Any) -> Any:
            if isinstance(item, ir.Display) and item.kind == "tuple":
                return _record(item, tuple(nested(i) for i in item.items))
            return item
        return nested(value)

    def as_shown(self, value: Any) -> Any:
        """A record ``of_containers`` made, returned as it is (``return layers``): the display it was,
        so that the function returns a tuple or list as before, not a container of leaves (which a
        caller without a container argument could not take); ``value`` itself otherwise."""
        if not (isinstance(value, Record) and value in self.shown):
            return value

        def display(item: Any) -> Any:
            return ir.Display(item.kind, tuple(display(i) for i in item.items)) if isinstance(item, Record) else item
        return display(value)

    def tree_of(self, value: Any, leaves: list) -> Any:
        """The structure of a settled result (a containers.Tree, or LEAF), its leaves appended to ``leaves``."""
        if isinstance(value, ir.Display):
            value = Record(value.kind, tuple if value.kind == "tuple" else list, tuple(range(len(value.items))),
                           value.items)
        if isinstance(value, Record):
            return containers.Tree(value.kind, value.cls, value.keys,
                                   tuple(self.tree_of(i, leaves) for i in value.items))
        leaves.append(self.ssa.flatten(value))
        return containers.LEAF

    def split_aux(self, value: Any, stmt: gast.Return) -> Any:
        """For ``has_aux=True``: the value of ``return value, aux``; the aux is kept for the result."""
        items = value.items if isinstance(value, ir.Display) or (isinstance(value, Record) and value.sequence) else ()
        if isinstance(value, ir.Var):  # a pair bound to a name (or joined from early returns): read at run time
            items = tuple(self.ssa.flatten(ir.Call(operator.getitem, (value, ir.Const(i)))) for i in range(2))
        if len(items) != 2:
            raise self.state.parsed.error("this return with has_aux=True", "the function must return a pair "
                                          "(value, aux), written as return value, aux", stmt)
        leaves: list = []
        self.state.aux_tree = self.tree_of(self.settle(items[1]), leaves)
        self.state.aux = ir.Display("tuple", tuple(leaves))
        return items[0]

    def note_sharing(self, name: str, value: Record) -> None:
        """Remember which names may reach the same dict (``b = a``, ``ds = [d]``, ``e = d["inner"]``):
        a write through one would show through the others in Python, so writes into them are refused."""
        def records(v: Any) -> Iterator[Record]:
            if isinstance(v, Record):
                yield v
                for item in v.items:
                    yield from records(item)
        mine = IdentitySet(records(value))
        holders = {k for k, v in self.scope.env.items() if k != name and any(r in mine for r in records(v))}
        if holders:
            for holder in holders | {name}:
                self.shared_records.setdefault(holder, set()).update((holders | {name}) - {holder})
        else:
            self.shared_records.pop(name, None)

    def within_params(self, record: Record) -> bool:
        """Whether ``record`` is (part of) a container argument."""
        def inside(value: Any) -> bool:
            return value is record or (isinstance(value, Record) and any(inside(i) for i in value.items))
        return any(inside(self.scope.env.get(p)) for p in self.state.parsed.params if p in self.state.structures)

    def store_item(self, target: gast.Subscript, value: Any) -> None:
        """``d["k"] = value`` into a dict the function made: a new static record under the same name."""
        name = target.value.id
        record = self.scope.env[name]
        key = self.state.converter.convert(target.slice)
        if getattr(target, "comprehension", None) and not isinstance(key, ir.Const):
            raise self.state.parsed.error("a dict comprehension whose keys are not known while transforming",
                                          "its keys must be constants: loop over a tuple or list of strings, over "
                                          "d.items(), d.keys() or d.values() of a dict with constant keys, or over "
                                          "range with constant bounds", target)
        shared = [k for k, v in self.scope.env.items() if k != name and v is record]
        shared = shared or sorted(self.shared_records.get(name, ()))
        if record.kind != "dict" or not isinstance(key, ir.Const) or shared or self.within_params(record):
            written_as = getattr(target, "written_as", None)  # a[i][j] = v, its outer element named by sugar.py
            why = ("it is an argument (writing into it would change the caller's data); make a new dict: "
                   f"{name} = dict({name}, key=value)" if self.within_params(record) else
                   f"{getattr(target, 'holder_written_as', name)} is not a list this function made and alone holds "
                   "here (an argument's, an item of another container, one another name or a nested function may see, "
                   "or one bound to something other than a list on some path): build the list anew with the new "
                   "item, or hold the numbers in an array (np.array([...])) and write into that"
                   if record.kind == "list" else
                   f"{name} is the same dict as {shared[0]}; copy it first: {name} = dict({name})" if shared else
                   "only a dict can be written into, with a constant key")
            raise self.state.parsed.error(f"an assignment into {written_as or name + '[...]'}", why, target)
        self.scope.env[name] = record.replaced(key.value, self.settle(value))

    def store_list_item(self, target: gast.Subscript, value: Any) -> Any:
        """``items[i] = value`` into a list the function made (``list_sharing`` marked it: no other name holds
        the list): the new list with that item replaced (``runtime.list_with``), which the caller binds to
        ``items``; a list of containers or objects (a record) by a constant index, its record with that item
        replaced, bound here (None returned).  A slice, or an index computed at run time into a record, is refused."""
        name = target.value.id
        items = self.scope.env.get(name)
        written = f"an assignment into {getattr(target, 'written_as', None) or name + '[...]'}"
        if isinstance(target.slice, gast.Slice):
            raise self.state.parsed.error(written, f"an assignment into a slice of the list {name} may change its "
                                          f"length; build the new list: {name} = {name}[:i] + [...] + {name}[j:]", target)
        key = self.state.converter.convert(target.slice)
        if isinstance(items, Record):
            position = key.value if isinstance(key, ir.Const) and type(key.value) is int else None
            if position is None or not -len(items.items) <= position < len(items.items):
                raise self.state.parsed.error(written, f"{name} holds containers or objects, so its structure must be "
                                              "known while transforming: write the item's position as a constant "
                                              f"within its {len(items.items)} items", target)
            self.scope.env[name] = items.replaced(position % len(items.items), self.settle(value))
            return None
        if isinstance(value, Record):
            raise self.state.parsed.error(written, f"{name} is a list made while the code runs, and a container or "
                                          "object cannot be one of its items; build the list of them as a display "
                                          "([a, b]) or by appends in a loop of known length", target)
        current = self.state.converter.convert(gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None))
        return ir.Call(runtime.list_with, (current, key, value))

    def appended(self, items: Any, item: Any, call: gast.Call) -> Record:
        """``layers.append(Layer(w))``: a list made while transforming (empty before, or of known items)
        with ``item`` after its items; a list made at run time, or one a loop run as a loop grows, is
        refused at the append's line (its length must be known while transforming)."""
        name = call.func.value.id
        if isinstance(items, Record) and items.kind == "list":
            held = items.items
        elif isinstance(items, ir.Display) and items.kind == "list":
            held = items.items
        else:
            held = None
        grown_in_a_loop = any(scope == Identity(self.scope) and name in before
                              for scope, before in self.state.runtime_loops)
        if held is None or grown_in_a_loop:
            shown = item.cls.__name__ if isinstance(item, Record) else "an item"
            raise self.state.parsed.error(f"the append of a {shown} to {name!r} where the list's length is not "
                                          "known while transforming", "a list of objects is made while "
                                          "transforming: write it as an explicit list ([Layer(w1), Layer(w2)]), "
                                          "or append to a list made empty ([]) in a loop over a tuple or list "
                                          "display, a parameter given one, zip or enumerate of such, or range "
                                          "with constant bounds (no break, continue or return)", call)
        settled = self.settle(ir.Display("list", tuple(held) + (item,)))
        return settled if isinstance(settled, Record) else _record(ir.Display("list", ()), (settled,))

    def record_pairs(self, template: Record, value: Any, user_name: str) -> list[tuple[str, Any]]:
        """(merge variable, value) for each data item of a container joined at an ``if`` or a loop."""
        if isinstance(value, Record) and value.cls is not template.cls:  # Model on one path, Other on another
            raise self.state.refusal(f"{user_name}, a {template.cls.__name__} on one path and a {value.cls.__name__} "
                                     "on another", "which class's methods and fields it has is read while "
                                     "transforming, so it must be the same on every path: make it of one class "
                                     "(or call the method on each path, inside the if)")
        if not (isinstance(value, Record) and value.kind == template.kind and value.keys == template.keys):
            raise self.state.refusal(f"{user_name}, a {template.cls.__name__} whose structure changes in a branch or "
                                     "loop", "keep its keys and item types the same on every path (set every key "
                                     "before the if or loop)")
        pairs = []
        for kept, item in zip(template.items, value.items):
            if isinstance(kept, Record):
                pairs += self.record_pairs(kept, item, user_name)
            elif isinstance(kept, ir.Var) and kept.name in self.record_merges:
                if isinstance(item, Record):  # a value on one path, a container on another
                    raise self.state.refusal(f"{user_name}, a {template.cls.__name__} whose item is a "
                                             f"{item.cls.__name__} on some paths only", "keep its items of the "
                                             "same structure on every path")
                pairs.append((kept.name, item))
            elif not _same(kept, item):
                raise self.state.refusal(f"{user_name}, a {template.cls.__name__} whose item {item} changes in a "
                                         "branch or loop", "only numbers and arrays in a container may change there")
        return pairs

    def template(self, values: list, loop: bool, base: str) -> Any:
        """The joined form of a container: a merge variable where its data items may differ."""
        first = values[0]
        if isinstance(first, Record):
            if not all(isinstance(v, Record) and v.kind == first.kind and v.keys == first.keys and v.cls is first.cls
                       for v in values):
                return first  # _record_pairs reports it
            return Record(first.kind, first.cls, first.keys, tuple(
                self.template([v.items[i] for v in values], loop, f"{base}_{_identifier(key)}")
                for i, key in enumerate(first.keys)))
        if isinstance(first, ir.Const) and not _number_or_array(first.value) and first.value is not None:
            return first  # a string or function: structure, which must not change
        if not loop and all(_same(first, v) for v in values[1:]):
            return first
        name = self.state.names.fresh(base)
        self.record_merges.add(name)
        return ir.Var(name)


def _number_or_array(value: object) -> bool:
    """A number (Python's or the library's) or an array: data, which may differ between paths."""
    return isinstance(value, (int, float, complex)) or language.is_library_scalar(value) or \
        language.is_array_value(value)
def _record(display: ir.Display, items: tuple) -> Record:
    """A record of a list or tuple display's ``items``."""
    return Record(display.kind, tuple if display.kind == "tuple" else list, tuple(range(len(items))), items)
