"""Containers in user code read while lowering: dict displays, items and attributes of records.

A part of ``expressions.ExpressionConverter`` (``conversion.ConverterPart``).  Input: a gast
``Dict``, or a ``Record`` (a container whose structure is static while lowering) with the index or
attribute read.  Output: a ``Record`` for a dict display (``{**params, "w": w}``, constant keys
only); the item or field a constant index or name reads (an object's item through its class's
``__getitem__``: ``protocols``; a read-only property through its getter; a constant of an object's
class), a record of the items a constant slice takes, or an ``ir.Call`` of ``getitem`` on a
display of plain items indexed at run time.  Anything else (a key computed at run time, a missing
item or field) is refused with a located ``TransformError``.
"""
from __future__ import annotations

import operator
from typing import Any

import gast
from ..core import ir, language
from ..frontend.conversion import Converter, ConverterPart, Record, hashable, is_plain_constant
from ..frontend.static_names import StaticNames
from ..frontend.user_classes import read_only_property
from .calls import CallConverter


class RecordReader(ConverterPart):
    """Reads records (dict displays, items, attributes) as the converter meets them."""

    def __init__(self, host: Converter, statics: StaticNames, calls: CallConverter) -> None:
        super().__init__(host)
        self.statics = statics
        self.calls = calls

    def display(self, node: gast.Dict) -> Record:
        record = Record("dict", dict, (), ())
        for key, value in zip(node.keys, node.values):
            if key is None:  # {**params, "w": w}
                unpacked = self.convert(value)
                if not (isinstance(unpacked, Record) and unpacked.kind == "dict"):
                    raise self.error("**unpacking of something other than a dict", "write the items out", node)
                for k, item in zip(unpacked.keys, unpacked.items):
                    record = record.replaced(k, item)
                continue
            converted = self.convert(key)
            if not (isinstance(converted, ir.Const) and hashable(converted.value)):
                raise self.error("a dict with a key computed at run time", "dict keys must be constants "
                                 "(strings or numbers), so that the dict's structure is known", key)
            record = record.replaced(converted.value, self.convert(value))
        return record

    def record_item(self, record: Record, index: Any, node: Any) -> Any:
        """``record[index]``: resolved now for a constant index; a sequence of plain values may also be
        indexed at run time."""
        followed = self.calls.protocols.item(record, index, node)  # obj[k]: its class's __getitem__
        if followed is not None:
            return followed
        self.calls.read_as_container(record, "an index", node)  # (an object's attributes are not its items)
        if isinstance(index, ir.Const) and hashable(index.value):
            try:
                return record.get(index.value)
            except LookupError:
                raise self.error(f"the item [{index.value!r}]", f"the {record.cls.__name__} has no such item "
                                 f"(its keys are {', '.join(map(repr, record.keys))})", node) from None
        if record.sequence and isinstance(index, ir.Slice) and all(
                p is None or isinstance(p, ir.Const) for p in (index.lower, index.upper, index.step)):
            bounds = (index.lower, index.upper, index.step)
            part = slice(*(p.value if isinstance(p, ir.Const) else None for p in bounds))
            items = record.items[part]
            return Record("tuple" if record.kind == "namedtuple" else record.kind,
                          tuple if record.kind == "namedtuple" else record.cls, tuple(range(len(items))), items)
        if record.sequence and not any(isinstance(i, Record) for i in record.items):
            return ir.Call(operator.getitem, (ir.Display("tuple" if record.kind != "list" else "list",
                                                         record.items), index))
        if record.kind == "dict":
            raise self.error("a dict read with a key computed at run time", "the keys must be constants "
                             "(d['w']) so that the dict's structure is known; loop over d.items() instead", node)
        raise self.error(f"an index computed at run time into a {record.cls.__name__}", "its items are "
                         "containers, so the index must be a constant; loop over it (for item in ...) instead", node)

    def record_attribute(self, base: Record, attr: str, node: Any) -> Any:
        """``p.w`` of a record: its field, or a constant of an object's class (``self.EPS``)."""
        if base.fields and attr in base.keys:
            return base.get(attr)
        if base.kind in ("object", "dataclass", "namedtuple"):
            held = self.statics.class_attribute(base.cls, attr)
            if read_only_property(held):  # self.scale: its getter, called on the object as Python does
                return self.calls.objects.call_method_of(base, held.fget, [], (), node)
            # self.EPS: a constant of the class (recorded: redefined, the code is old)
            if base.kind == "object" and (is_plain_constant(held) or language.is_array_value(held)):
                return ir.Const(held)
        raise self.error(f"the attribute .{attr} of a {base.cls.__name__}", "it is not one of its "
                         f"data fields ({', '.join(map(str, base.keys)) or 'none'})", node)
