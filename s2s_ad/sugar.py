"""Stage 1a: everyday statements rewritten into the subset the rest reads (gast → gast).

Input: a freshly parsed ``gast.FunctionDef``.  Output: the same function, in
place, with

* annotated assignments as plain ones (``x: float = v`` is ``x = v``; a bare
  ``x: float`` declares nothing and goes);
* a lambda bound to a name (``sq = lambda t: t * t``) as the nested
  ``def sq(t): return t * t``, which ``lower.py`` inlines where it is called,
  reading the enclosing names as they are at the call, as Python does.

Nothing here needs to know what a name means; ``parse.py`` runs it before
checking the subset, and only when the tree holds one of these nodes.
"""
from __future__ import annotations

from typing import Any

import gast

# The node kinds this stage rewrites (parse.py calls it only if the tree holds one).
REWRITTEN = (gast.AnnAssign, gast.Lambda)


def rewrite(node: gast.FunctionDef) -> None:
    """Rewrite ``node``'s statement lists in place (see the module docstring)."""
    for parent in list(gast.walk(node)):
        for field_name in ("body", "orelse"):
            block = getattr(parent, field_name, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                setattr(parent, field_name, [_statement(stmt) for stmt in block])


def _statement(stmt: Any) -> Any:
    if isinstance(stmt, gast.AnnAssign):
        if stmt.value is None:
            return _located(gast.Pass(), stmt)
        return _located(gast.Assign(targets=[stmt.target], value=stmt.value, type_comment=None), stmt)
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Lambda)):
        lam = stmt.value
        body = [_located(gast.Return(value=lam.body), lam.body)]
        function = gast.FunctionDef(name=stmt.targets[0].id, args=lam.args, body=body, decorator_list=[],
                                    returns=None, type_comment=None)
        if "type_params" in gast.FunctionDef._fields:  # gast 0.6 and later
            function.type_params = []
        return _located(function, stmt)
    return stmt


def _located(new: Any, old: Any) -> Any:
    for name in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        setattr(new, name, getattr(old, name, None))
    return new
