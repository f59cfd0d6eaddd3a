"""Stage 1b: make control flow structured (gast → gast).

Input: a checked ``gast.FunctionDef``.  Output: the same function in which
``break``, ``continue`` and every ``return`` but the last are gone:

* ``continue`` in loop L sets ``skip_L``; ``break`` sets ``skip_L`` and
  ``stop_L``; an early ``return v`` sets ``result = v`` and ``returned``, and
  the skip and stop flags of every enclosing loop;
* the statements after anything that may set a flag are guarded by
  ``if not skip_L:`` (inside loop L) or ``if not returned:`` (outside loops);
* a loop that can stop early ends its body with ``if stop_L: break``, the
  only ``break`` left, which ``lower.py`` reads as the loop's exit flag;
* the function ends with ``return result``.

Before that, a branch that always returns takes the statements after it as
its ``else`` (``if c: return a`` then ``return b`` becomes ``if c: return a
else: return b``), outside loops: every return is then in tail position, each
arm sets ``result`` itself, and a container returned from both arms keeps its
structure at the join instead of meeting a "not yet returned" placeholder.

So every iteration runs its body from the top to that final test, which is
what lets the reverse sweep replay iterations backwards.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

import gast

from ..core import ir


def _name(id_: str, store: bool = False) -> gast.Name:
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def _set(name: str, value: Any, line: int) -> gast.Assign:
    return _at(gast.Assign(targets=[_name(name, store=True)], value=value, type_comment=None), line)


def _at(node: Any, line: int) -> Any:
    for sub in gast.walk(node):
        sub.lineno, sub.col_offset = line, 0
        sub.end_lineno, sub.end_col_offset = line, 0
    return node


def _guarded(test: Any, body: list, line: int) -> gast.If:
    """``if test: body``, the ``if`` and its test at ``line``; the statements of ``body`` keep their own
    lines (what the generated code's ``# line`` comments and an error's note name)."""
    guard = gast.If(test=_at(test, line), body=body, orelse=[])
    guard.lineno, guard.col_offset, guard.end_lineno, guard.end_col_offset = line, 0, line, 0
    return guard


def _true() -> gast.Constant:
    return gast.Constant(value=True, kind=None)


def _false() -> gast.Constant:
    return gast.Constant(value=False, kind=None)


@dataclass
class _Loop:
    skip: str
    stop: str
    uses_skip: bool = False
    uses_stop: bool = False


@dataclass
class Desugar:
    taken: set[str]
    loops: list[_Loop] = field(default_factory=list)
    returned: Optional[str] = None
    result: Optional[str] = None

    def fresh(self, base: str) -> str:
        return ir.fresh_name(base, self.taken)

    # -- comprehensions ---------------------------------------------------

    def hoist(self, stmts: list) -> list:
        """Turn each list comprehension into an append loop placed before its statement, and each dict
        comprehension into a loop of stores (``d[k] = v``: the lowering unrolls it where its keys are
        known, and refuses it, at the comprehension's line, where they are not)."""
        out: list = []
        for stmt in stmts:
            for field_name in ("body", "orelse"):
                if isinstance(stmt, (gast.If, gast.For, gast.While)) and getattr(stmt, field_name, None):
                    setattr(stmt, field_name, self.hoist(getattr(stmt, field_name)))
            own = [stmt.test] if isinstance(stmt, (gast.If, gast.While)) else \
                [stmt.iter] if isinstance(stmt, gast.For) else [stmt]
            loops: list = []
            if (isinstance(stmt, gast.Assign) and isinstance(stmt.value, (gast.ListComp, gast.DictComp))
                    and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
                # squares = [...]: build the list under the user's own name
                stmt.value = self._comprehension(stmt.value, loops, stmt.lineno, stmt.targets[0].id)
            for root in own:
                for parent in list(gast.walk(root)):
                    for name, value in gast.iter_fields(parent):
                        if isinstance(value, (gast.ListComp, gast.DictComp)):
                            setattr(parent, name, self._comprehension(value, loops, stmt.lineno))
                        elif isinstance(value, list):
                            for i, item in enumerate(value):
                                if isinstance(item, (gast.ListComp, gast.DictComp)):
                                    value[i] = self._comprehension(item, loops, stmt.lineno)
            if isinstance(stmt, gast.While) and loops:
                raise ValueError(stmt.lineno)  # re-evaluated every iteration: subset.py refuses it first
            out.extend(loops)
            out.append(stmt)
        return out

    def _comprehension(self, comp: Any, loops: list, line: int, name: str = "") -> gast.Name:
        """A list or dict comprehension as a loop building ``name`` (a fresh name if none)."""
        result = name or self.fresh("items" if isinstance(comp, gast.ListComp) else "mapping")
        renames = {}
        for generator in comp.generators:
            for target in gast.walk(generator.target):
                if isinstance(target, gast.Name):
                    renames[target.id] = self.fresh(target.id)
        for node in gast.walk(comp):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]
        if isinstance(comp, gast.ListComp):
            add = gast.Expr(value=gast.Call(func=gast.Attribute(value=_name(result), attr="append", ctx=gast.Load()),
                                            args=[comp.elt], keywords=[]))
            empty = gast.List(elts=[], ctx=gast.Load())
        else:
            target = gast.Subscript(value=_name(result), slice=comp.key, ctx=gast.Store())
            target.comprehension = (comp.lineno, comp.col_offset)  # where lower.py refuses an unknown key
            add = gast.Assign(targets=[target], value=comp.value, type_comment=None)
            empty = gast.Dict(keys=[], values=[])
        body: list = [add]
        for generator in reversed(comp.generators):
            for condition in reversed(generator.ifs):
                body = [gast.If(test=condition, body=body, orelse=[])]
            body = [gast.For(target=generator.target, iter=generator.iter, body=body, orelse=[], type_comment=None)]
        loops.append(_set(result, empty, line))
        loops.extend(self.hoist([_at(node, line) for node in body]))
        return _name(result)

    # -- early exits -----------------------------------------------------

    def function(self, node: gast.FunctionDef, kinds: Counter) -> bool:
        """Rewrite ``node``; ``kinds`` counts its nodes by type.  Returns False if nothing changed."""
        if kinds[gast.ListComp] or kinds[gast.DictComp]:
            node.body = self.hoist(node.body)
        body = node.body
        final = body[-1]
        # (a nested function's return counts too: flags it may not need; a function ending in an
        # if/else or a while True that returns has no final return of its own)
        early = kinds[gast.Return] > 1 or not isinstance(final, gast.Return)
        if not early:
            node.body = self.block(body[:-1])[0] + [final]
            return bool(kinds[gast.ListComp] or kinds[gast.DictComp] or kinds[gast.Break] or kinds[gast.Continue])
        self.returned, self.result = self.fresh("returned"), self.fresh("result")
        node.exit_result = self.result  # (lowering: a path that has not returned leaves it unbound, never read)
        body = _returns_in_tail(body)
        new_body, _ = self.block(body)
        line = final.lineno
        node.body = [_set(self.returned, _false(), body[0].lineno)] + new_body + [
            _at(gast.Return(value=_name(self.result)), line)]
        return True

    def block(self, stmts: list) -> tuple[list, bool]:
        """Rewrite a statement list; the flag says control may leave it early."""
        out: list = []
        for k, stmt in enumerate(stmts):
            new, may_exit = self.statement(stmt)
            out.extend(new)
            if may_exit:
                rest = stmts[k + 1:]
                if rest:
                    rest_body, _ = self.block(rest)
                    if rest_body:
                        out.append(_guarded(self._continuing(), rest_body, rest[0].lineno))
                return out, True
        return out, False

    def _exit_flags(self) -> tuple[str, str]:
        """The names of the ``returned`` flag and the ``result``, made by ``function`` for a function with
        an early return (only a ``return`` outside loops reads them, and only such functions have one)."""
        if self.returned is None or self.result is None:
            raise AssertionError("desugar: a return the function's rewrite did not expect")
        return self.returned, self.result

    def _continuing(self) -> Any:
        flag = self.loops[-1].skip if self.loops else self._exit_flags()[0]
        if self.loops:
            self.loops[-1].uses_skip = True
        return gast.UnaryOp(op=gast.Not(), operand=_name(flag))

    def statement(self, stmt: Any) -> tuple[list, bool]:
        line = stmt.lineno
        if isinstance(stmt, gast.Continue):
            self.loops[-1].uses_skip = True
            return [_set(self.loops[-1].skip, _true(), line)], True
        if isinstance(stmt, gast.Break):
            loop = self.loops[-1]
            loop.uses_skip = loop.uses_stop = True
            return [_set(loop.skip, _true(), line), _set(loop.stop, _true(), line)], True
        if isinstance(stmt, gast.Return):
            returned, result = self._exit_flags()
            sets = [_set(result, stmt.value, line), _set(returned, _true(), line)]
            for loop in self.loops:
                loop.uses_skip = loop.uses_stop = True
                sets += [_set(loop.skip, _true(), line), _set(loop.stop, _true(), line)]
            return sets, True
        if isinstance(stmt, gast.Raise):  # it sets no flag: control never goes on from it at run time
            return [stmt], False
        if isinstance(stmt, gast.If):
            stmt.body, exits_body = self.block(stmt.body)
            stmt.orelse, exits_else = self.block(stmt.orelse)
            if not stmt.body:
                stmt.body = [_at(gast.Pass(), line)]
            return [stmt], exits_body or exits_else
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt)
        return [stmt], False

    def loop(self, stmt: Any) -> tuple[list, bool]:
        line = stmt.lineno
        loop = _Loop(self.fresh("skip"), self.fresh("stop"))
        self.loops.append(loop)
        body, _ = self.block(stmt.body)
        self.loops.pop()
        before = []
        if loop.uses_skip:
            body.insert(0, _set(loop.skip, _false(), line))
        if loop.uses_stop:
            before.append(_set(loop.stop, _false(), line))
            body.append(_at(gast.If(test=_name(loop.stop), body=[gast.Break()], orelse=[]), line))
        stmt.body = body
        returns = self.returned is not None and any(
            isinstance(n, gast.Assign) and any(isinstance(t, gast.Name) and t.id == self.returned for t in n.targets)
            for n in gast.walk(stmt))
        return before + [stmt], returns


def _always_returns(stmts: list) -> bool:
    """Control never runs past the end of ``stmts``: it ends in a return or raise on every path
    (outside loops; a loop's body is not looked into)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return True
    return isinstance(last, gast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _returns_in_tail(stmts: list) -> list:
    """``stmts`` with the statements after a branch that always returns moved into its other arm,
    so that no statement runs after a return has been decided (see the module docstring).  Loops
    are left alone: a return inside one still sets the flags."""
    out: list = []
    for k, stmt in enumerate(stmts):
        out.append(stmt)
        if not isinstance(stmt, gast.If):
            continue
        stmt.body = _returns_in_tail(stmt.body)
        stmt.orelse = _returns_in_tail(stmt.orelse)
        rest = stmts[k + 1:]
        if not rest:
            break
        body_returns, else_returns = _always_returns(stmt.body), _always_returns(stmt.orelse)
        if body_returns and not else_returns:
            stmt.orelse = _returns_in_tail(stmt.orelse + rest)
            break
        if else_returns and not body_returns:
            stmt.body = _returns_in_tail(stmt.body + rest)
            break
    return out


def desugar(node: gast.FunctionDef, taken: set[str], kinds: Optional[Counter] = None) -> bool:
    """Rewrite ``node`` in place (see the module docstring); ``taken`` are the user's names.

    ``kinds`` counts the nodes of ``node`` by type, if the caller has counted them (one walk spares
    one per statement).  Returns False if the function needed no rewriting: its tree is unchanged.
    """
    if kinds is None:
        kinds = Counter(type(n) for n in gast.walk(node))
    return Desugar(ir.NameSet(taken)).function(node, kinds)
