"""Stage 1a: everyday statements rewritten into the subset the rest reads (gast → gast).

Input: a freshly parsed ``gast.FunctionDef``.  Output: the same function, in
place, with

* annotated assignments as plain ones (``x: float = v`` is ``x = v``; a bare
  ``x: float`` declares nothing and goes);
* a lambda bound to a name (``sq = lambda t: t * t``) as the nested
  ``def sq(t): return t * t``, which ``lower.py`` inlines where it is called,
  reading the enclosing names as they are at the call, as Python does; a
  lambda passed straight to a call (``apply(lambda t: t ** 3, x)``) as such
  a def (``lambda_1``) placed before the statement.

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
    taken = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    for parent in list(gast.walk(node)):
        for field_name in ("body", "orelse"):
            block = getattr(parent, field_name, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                new_block: list = []
                for stmt in block:
                    new_block.extend(_hoisted_lambdas(stmt, taken))
                    new_block.append(_statement(stmt))
                setattr(parent, field_name, new_block)


def _hoisted_lambdas(stmt: Any, taken: set) -> list:
    """A lambda passed straight to a call (``apply(lambda t: t ** 3, x)``) becomes a nested def
    placed before the statement, and the call passes its name.  (A lambda inside a comprehension
    or another lambda stays: its names are not the statement's.)"""
    own = [stmt.test] if isinstance(stmt, (gast.If, gast.While)) else [stmt.iter] if isinstance(stmt, gast.For) \
        else [] if isinstance(stmt, (gast.FunctionDef, gast.ClassDef)) else [stmt]
    defs: list = []
    for root in own:
        stack = [root]
        while stack:
            parent = stack.pop()
            if isinstance(parent, (gast.ListComp, gast.Lambda, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
                continue
            if isinstance(parent, gast.Call):
                parent.args = [_named(a, stmt, defs, taken) for a in parent.args]
                for keyword in parent.keywords:
                    keyword.value = _named(keyword.value, stmt, defs, taken)
            stack.extend(gast.iter_child_nodes(parent))
    return defs


def _named(arg: Any, stmt: Any, defs: list, taken: set) -> Any:
    if not isinstance(arg, gast.Lambda):
        return arg
    k = 1
    while f"lambda_{k}" in taken:
        k += 1
    name = f"lambda_{k}"
    taken.add(name)
    defs.append(_def(name, arg, stmt))
    return _located(gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None), arg)


def _def(name: str, lam: gast.Lambda, stmt: Any) -> gast.FunctionDef:
    body = [_located(gast.Return(value=lam.body), lam.body)]
    function = gast.FunctionDef(name=name, args=lam.args, body=body, decorator_list=[], returns=None,
                                type_comment=None)
    if "type_params" in gast.FunctionDef._fields:  # gast 0.6 and later
        function.type_params = []
    function.from_lambda = True  # for messages: "the lambda", not the name given here
    return _located(function, stmt)


def _statement(stmt: Any) -> Any:
    if isinstance(stmt, gast.AnnAssign):
        if stmt.value is None:
            return _located(gast.Pass(), stmt)
        return _located(gast.Assign(targets=[stmt.target], value=stmt.value, type_comment=None), stmt)
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Lambda)):
        return _def(stmt.targets[0].id, stmt.value, stmt)
    return stmt


def _located(new: Any, old: Any) -> Any:
    for name in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        setattr(new, name, getattr(old, name, None))
    return new
