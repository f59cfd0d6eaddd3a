"""A refusal met while lowering, blamed on the call it follows from.

Input: a parsed function and the ``TransformError`` its lowering raised.
Output: the refusal to report.  ``w, v = np.linalg.eig(A); np.sum(w.real)``
is refused at ``w.real`` while lowering (an attribute with no rule), before
the analysis would refuse ``np.linalg.eig`` itself, a function with no rule
whose arguments depend on the inputs.  The user must hear about ``eig``: an
attribute of its result cannot be differentiated because nothing of it can.
So when the refused construct is an attribute of a name, and that name is
assigned the result of a call of a function with no rule and no source to
transform, the refusal names that call (its line, and why) instead; any
other refusal is reported as it is.
"""
from __future__ import annotations

from typing import Any, Optional

import gast

from ..core.errors import TransformError
from ..lowering.expressions import describe_callable, missing_rule
from ..frontend.parse import ParsedFunction


def blamed(parsed: ParsedFunction, refusal: TransformError) -> TransformError:
    """``refusal``, or the refusal of the call without a rule whose result it reads an attribute of."""
    if not refusal.construct.startswith("the attribute .") or refusal.filename != parsed.filename:
        return refusal
    name = _attribute_base_at(parsed, refusal.line, refusal.column)
    if name is None:
        return refusal
    for node in gast.walk(parsed.node):
        if isinstance(node, gast.Assign) and isinstance(node.value, gast.Call) and name in _targets(node):
            fn = _resolved(parsed, node.value.func)
            why = missing_rule(fn) if fn is not None else None
            if why is not None:
                return TransformError(f"the call of {describe_callable(fn)}", f"{why} (line {refusal.line} reads "
                                      f"{refusal.construct[4:]} of its result)", filename=parsed.filename,
                                      line=node.lineno, column=node.value.col_offset + 1)
    return refusal


def _attribute_base_at(parsed: ParsedFunction, line: Optional[int], column: Optional[int]) -> Optional[str]:
    """The name whose attribute is read at ``line``:``column`` (columns counted from 1)."""
    for node in gast.walk(parsed.node):
        if isinstance(node, gast.Attribute) and node.lineno == line and isinstance(node.value, gast.Name) \
                and (column is None or node.col_offset + 1 == column):
            return node.value.id
    return None


def _targets(assign: gast.Assign) -> set[str]:
    names = set()
    for target in assign.targets:
        items = target.elts if isinstance(target, (gast.Tuple, gast.List)) else [target]
        names |= {item.id for item in items if isinstance(item, gast.Name)}
    return names


def _resolved(parsed: ParsedFunction, func: Any) -> Any:
    """What ``func`` (``name`` or ``module.attribute...``) means in the function's scope; None if unknown."""
    path = []
    while isinstance(func, gast.Attribute):
        path.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name):
        return None
    found, value = parsed.resolver.lookup(func.id)
    if not found:
        return None
    for attribute in reversed(path):
        value = getattr(value, attribute, None)
    return value
