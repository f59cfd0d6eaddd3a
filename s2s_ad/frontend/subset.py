"""The subset of Python the lowering understands: the check of a parsed function's tree against it.

Input: a function's gast tree as parsed (parse.py: everyday statements already
rewritten into the subset by sugar.py), every node of it (``all_nodes``), its
body without the docstring, and how to refuse (``ParsedFunction.error``: a
``TransformError`` with file, line and column).  Output: nothing where the tree
is in the subset; otherwise the refusal of the first construct outside it,
with a reason and a hint (``_REFUSALS``): a try or with statement, a bare
return, a function without a final return, an assignment to an attribute...
Refused here, the lowering never meets them.  ``always_returns`` says whether
control can fall off the end of a body.
"""
from __future__ import annotations

from typing import Any, Callable

import gast

from ..core.errors import TransformError
from ..core.identity import IdentitySet
from ..core.nodes import all_nodes

# How a check refuses a construct: (what it is, what to write instead, the node), as ``ParsedFunction.error``.
Refuse = Callable[[str, str, Any], TransformError]


# Statements and expressions the lowering understands.  Anything else is
# refused here with a reason and a hint (see ``_REFUSALS``).
_STATEMENTS = (gast.Assign, gast.AugAssign, gast.Return, gast.Pass, gast.Expr, gast.If, gast.For, gast.While,
               gast.Break, gast.Continue, gast.FunctionDef, gast.Assert, gast.Raise)
_EXPRESSIONS = (
    gast.BinOp, gast.UnaryOp, gast.Compare, gast.Call, gast.Attribute, gast.Subscript,
    gast.Name, gast.Constant, gast.Tuple, gast.List, gast.Slice, gast.keyword, gast.IfExp, gast.BoolOp,
    gast.ListComp, gast.Dict, gast.DictComp, gast.JoinedStr, gast.FormattedValue,
)
_REFUSALS: dict[type, tuple[str, str]] = {
    gast.Try: ("a try statement", "exceptions cannot be differentiated; check inputs before calling the gradient"),
    gast.With: ("a with statement", "move the context manager outside the differentiated function"),
    gast.Global: ("a global statement", "pass the value as an argument and return the result instead"),
    gast.Nonlocal: ("a nonlocal statement", "pass the value as an argument and return the result instead"),
    gast.Delete: ("a del statement", "drop the del; names go out of scope at return"),
    gast.AsyncFunctionDef: ("an async function", "differentiate a plain def"),
    gast.Lambda: ("a lambda that is not bound to a name", "bind it to a name in a statement of its own "
                  "(sq = lambda t: t * t) and call it by that name, or define the function with def"),
    gast.SetComp: ("a set comprehension", "sets cannot be differentiated"),
    gast.GeneratorExp: ("a generator expression", "write a list comprehension instead (sum, min, max, any, all, "
                        "list, tuple and sorted may take one: sum(v * v for v in x))"),
    gast.Yield: ("yield", "generators cannot be differentiated; return a value"),
    gast.YieldFrom: ("yield from", "generators cannot be differentiated; return a value"),
    gast.Await: ("await", "differentiate a plain synchronous function"),
    gast.Import: ("an import inside the function", "import at module level"),
    gast.ImportFrom: ("an import inside the function", "import at module level"),
    gast.ClassDef: ("a class definition", "define classes at module level"),
    gast.Set: ("a set", "sets cannot be differentiated"),
    gast.NamedExpr: ("the walrus operator :=", "assign in a statement of its own"),
    gast.Starred: ("a starred expression", "pass the arguments one by one"),
}


# The node types the whole-tree check looks at (gast makes a tree of its own classes only).  _SUSPECT:
# expressions _check_statements refuses where a statement holds them (so do chained comparisons).
_SUSPECT = {kind for kind in vars(gast).values() if isinstance(kind, type) and issubclass(kind, gast.expr)
            and not issubclass(kind, _EXPRESSIONS)}
_WATCHED = _SUSPECT | set(_REFUSALS) | {gast.For, gast.While, gast.Return, gast.Compare}


def _check_params(node: gast.FunctionDef, filename: str) -> list[str]:
    args = node.args
    for extra, what in ((args.vararg, "*args"), (args.kwarg, "**kwargs")):
        if extra is not None:
            raise TransformError(f"a function with {what}", "name each parameter",
                                 filename=filename, line=node.lineno)
    if args.kwonlyargs or getattr(args, "posonlyargs", None):
        pass  # bound by name through the signature; all are plain locals inside
    return [a.id for a in list(getattr(args, "posonlyargs", [])) + args.args + args.kwonlyargs]


def check_subset(function: gast.FunctionDef, nodes: list, body: list, refuse: Refuse) -> None:
    """Refuse the first construct of ``function`` outside the subset: ``nodes`` is every node of it, and
    ``body`` its body without the docstring."""
    suspects = False  # an expression the statement checks refuse (they look for it only if there is one)
    # What a raise holds (raise ValueError(f"unknown {kind}")) never runs in differentiated code: the
    # lowering drops the raise with its branch, or refuses the raise itself.
    raised = IdentitySet(n for r in nodes if isinstance(r, gast.Raise) for n in all_nodes(r) if n is not r)
    # A default (act=lambda z: z * z) is made where the def runs, not in the body: a function value the
    # call passes on (lowering.helper_calls), never lowered here.
    for default in [*function.args.defaults, *function.args.kw_defaults]:
        for n in all_nodes(default) if default is not None else ():
            raised.add(n)
    for node in nodes:  # first: a refused construct says more than a missing return
        if raised and node in raised:
            continue
        kind = type(node)
        if kind not in _WATCHED:
            continue
        suspects = suspects or kind in _SUSPECT
        if node is not function and kind in _REFUSALS:
            raise refuse(*_REFUSALS[kind], node)
        if kind in (gast.For, gast.While) and node.orelse:
            raise refuse(f"an else clause on a {'for' if kind is gast.For else 'while'} loop",
                         "set a flag before break and test it after the loop", node)
        if kind is gast.Return and node.value is None:
            raise refuse("a bare return", "return the value to differentiate", node)
    if not always_returns(body):
        raise refuse(f"{function.name!r} without a final return", "end the function with return <scalar> "
                     "(or an if/else whose every branch returns)", body[-1] if body else None)
    _check_statements(refuse, body, suspects)


def _check_statements(refuse: Refuse, body: list, suspects: bool) -> None:
    """Check each statement in ``body``; ``suspects`` False says the tree holds no expression to refuse
    (so the statements' own nodes need not be walked to find one)."""
    for stmt in body:
        for block in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
            if isinstance(stmt, (gast.If, gast.For, gast.While)) and block:
                _check_statements(refuse, block, suspects)
        if isinstance(stmt, gast.For):
            _check_target(refuse, stmt.target)
        if isinstance(stmt, gast.FunctionDef):
            _check_nested(refuse, stmt, suspects)
            continue
        if isinstance(stmt, gast.Expr) and not _is_list_append(stmt) and not isinstance(stmt.value, gast.Call):
            raise refuse("an expression statement", "a differentiated function computes values: assign "
                         "the expression to a name, or drop it", stmt)
        if isinstance(stmt, gast.While) and any(isinstance(n, (gast.ListComp, gast.DictComp))
                                                for n in gast.walk(stmt.test)):
            raise refuse("a list comprehension in a while condition", "compute it in the loop body", stmt)
        if isinstance(stmt, gast.Assign):
            for target in stmt.targets:
                _check_target(refuse, target)
        if isinstance(stmt, gast.AugAssign):
            _check_target(refuse, stmt.target, tuple_ok=False)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) > 1 and any(
                isinstance(t, gast.Subscript) for t in stmt.targets):
            raise refuse("a chained assignment into an array", "assign one target at a time", stmt)
        if not isinstance(stmt, _STATEMENTS):
            raise refuse(f"the statement {type(stmt).__name__}", "rewrite it with assignments", stmt)
        for node in _own_nodes(stmt) if suspects else ():
            if isinstance(node, gast.expr) and not isinstance(node, _EXPRESSIONS):
                raise refuse(f"the expression {type(node).__name__}", "rewrite it with simpler expressions", node)


def _check_nested(refuse: Refuse, node: gast.FunctionDef, suspects: bool) -> None:
    """A function defined inside the differentiated one: inlined where it is called."""
    if node.decorator_list:
        raise refuse(f"a decorated nested function {node.name!r}", "drop the decorator", node)
    args = node.args
    # defaults are read where the function is called: only constants, and a lambda's (sugar.py put its
    # others into names of their own where it is made), keep Python's meaning
    late = [d for d in args.defaults if not isinstance(d, gast.Constant)]
    if args.vararg or args.kwarg or args.kwonlyargs or (late and not getattr(node, "from_lambda", False)):
        what = "the lambda" if getattr(node, "from_lambda", False) else f"the nested function {node.name!r}"
        raise refuse(f"the parameters of {what}", "give it plain positional parameters, with defaults "
                     "only if they are constants (a value it needs can be read from the enclosing "
                     "function; a lambda's defaults may be any value)", node)
    body = node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]
    if not always_returns(body):
        raise refuse(f"the nested function {node.name!r} without a final return", "end it with return", node)
    if any(isinstance(n, (gast.Global, gast.Nonlocal)) for n in gast.walk(node)):
        raise refuse(f"nonlocal or global in {node.name!r}", "return the new value instead", node)
    _check_statements(refuse, body, suspects)


def always_returns(body: list) -> bool:
    """Whether control cannot fall off the end of ``body``: it ends with a return or a raise, or with
    an if/else each of whose branches always does (desugar.py turns those returns into one)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, gast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    if isinstance(last, gast.While) and isinstance(last.test, gast.Constant) and last.test.value is True:
        return not _breaks(last.body)  # while True: left only by a return
    return isinstance(last, (gast.Return, gast.Raise))  # a raise leaves too: the caller gets the exception


def _breaks(body: list) -> bool:
    """Whether a ``break`` in ``body`` leaves the loop whose body it is (not an inner loop's)."""
    for stmt in body:
        if isinstance(stmt, gast.Break):
            return True
        if isinstance(stmt, gast.If) and (_breaks(stmt.body) or _breaks(stmt.orelse)):
            return True
    return False


def _is_list_append(stmt: Any) -> bool:
    call = stmt.value
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "append"
            and isinstance(call.func.value, gast.Name) and len(call.args) == 1 and not call.keywords)


def _own_nodes(stmt: Any) -> list:
    """The nodes of a statement, without those of its nested statement lists."""
    if isinstance(stmt, (gast.If, gast.While)):
        return list(gast.walk(stmt.test))
    if isinstance(stmt, gast.For):
        return list(gast.walk(stmt.iter)) + list(gast.walk(stmt.target))
    return list(gast.walk(stmt))


def _check_target(refuse: Refuse, target: Any, tuple_ok: bool = True) -> None:
    if isinstance(target, gast.Name):
        return
    if tuple_ok and isinstance(target, (gast.Tuple, gast.List)):
        for element in target.elts:
            _check_target(refuse, element, tuple_ok=True)
        return
    if isinstance(target, gast.Subscript):
        if not isinstance(target.value, gast.Name):
            raise refuse("an assignment into a nested element", "index the array by name: a[i, j] = v",
                         target)
        return
    if isinstance(target, gast.Attribute):
        raise refuse("an assignment to an attribute", getattr(target, "s2s_ad_refusal", None) or (
            "the function must not change objects it is given; store into an object the function made and "
            "holds by one name, or return the new value"), target)
    raise refuse(f"an assignment to {type(target).__name__}", "assign to plain names", target)
