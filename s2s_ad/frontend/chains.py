"""Stage 1 (before gast): a long if/elif chain rewritten so that its depth no longer grows with it.

Input: a Python ``ast.Module`` fresh from ``ast.parse``.  Output: the same
module, in place, where every chain of more than ``LONG_CHAIN`` tests

    if c0: B0
    elif c1: B1
    ...
    else: E

reads as a flat run of tests that record which branch is taken, followed by
a balanced dispatch on that number (nesting ``log2`` of the chain's length):

    elif_branch = n
    if c0:
        elif_branch = 0
    if elif_branch == n:
        if c1:
            elif_branch = 1
    ...
    if elif_branch < m:
        if elif_branch < k: ... B0 ... else: ...
    else: ... E

Python nests an ``elif`` inside the ``else`` of the ``if`` before it, so a
chain of 500 branches is a tree 500 levels deep, and every walk over the
tree (gast's conversion, the subset check, lowering, analysis, the reverse
sweep, emission) would recurse that deep.  The tests are evaluated in the same
order and each only when all before it were false, as Python does; each
body runs exactly when it did.  The walk here is iterative, and every new
node carries the line of the test it comes from, so that messages and the
generated code's line notes name the user's lines.  Chains of at most
``LONG_CHAIN`` tests are left as written.
"""
from __future__ import annotations

import ast
from typing import Optional, TypeVar

_Node = TypeVar("_Node", bound=ast.AST)

# Chains with more tests than this are flattened; shorter ones keep the user's shape in the generated code.
LONG_CHAIN = 24


def flatten_long_chains(module: ast.Module) -> None:
    """Rewrite, in place, every if/elif chain of ``module`` longer than ``LONG_CHAIN`` tests."""
    taken = {node.id for node in ast.walk(module) if isinstance(node, ast.Name)}
    taken |= {node.arg for node in ast.walk(module) if isinstance(node, ast.arg)}
    blocks: list[list[ast.stmt]] = [module.body]
    while blocks:
        block = blocks.pop()
        index = 0
        while index < len(block):
            statement = block[index]
            chain = _chain(statement)
            if chain is not None:
                name = _fresh("elif_branch", taken)
                replacement = _flattened(name, *chain, statement)
                block[index:index + 1] = replacement
                index += len(replacement)
                blocks.extend(_blocks_of(replacement))
                continue
            blocks.extend(_blocks_of([statement]))
            index += 1


def _chain(statement: ast.stmt) -> Optional[tuple[list[ast.expr], list[list[ast.stmt]], list[ast.stmt]]]:
    """The tests, bodies and final else-body of the chain ``statement`` begins, if longer than ``LONG_CHAIN``."""
    if not isinstance(statement, ast.If):
        return None
    tests: list[ast.expr] = []
    bodies: list[list[ast.stmt]] = []
    node = statement
    while True:
        tests.append(node.test)
        bodies.append(node.body)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
        else:
            break
    if len(tests) <= LONG_CHAIN:
        return None
    return tests, bodies, node.orelse


def _blocks_of(statements: list[ast.stmt]) -> list[list[ast.stmt]]:
    """The statement lists nested directly in ``statements`` (bodies, else-bodies, nested defs)."""
    found = []
    for statement in statements:
        for field in ("body", "orelse", "finalbody"):
            value = getattr(statement, field, None)
            if isinstance(value, list):
                found.append(value)
        for handler in getattr(statement, "handlers", ()):
            found.append(handler.body)
    return found


def _fresh(base: str, taken: set[str]) -> str:
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}_{number}"
    taken.add(name)
    return name


def _at(node: _Node, origin: ast.AST) -> _Node:
    """``node`` and every node in it without a location placed at ``origin``'s (iteratively)."""
    for child in ast.walk(node):
        if not hasattr(child, "lineno") and "lineno" in child._attributes:
            ast.copy_location(child, origin)
    return node


def _set(name: str, value: int, origin: ast.AST) -> ast.stmt:
    return _at(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Constant(value=value)), origin)


def _compare(name: str, op: ast.cmpop, value: int, origin: ast.AST) -> ast.expr:
    return _at(ast.Compare(left=ast.Name(id=name, ctx=ast.Load()), ops=[op], comparators=[ast.Constant(value=value)]),
               origin)


def _flattened(name: str, tests: list[ast.expr], bodies: list[list[ast.stmt]], last: list[ast.stmt],
               first: ast.AST) -> list[ast.stmt]:
    """The flat tests recording the branch taken in ``name``, then the balanced dispatch on it."""
    none = len(tests)  # the number of the else-branch: no test was true
    statements: list[ast.stmt] = [_set(name, none, first)]
    for number, test in enumerate(tests):
        record = _at(ast.If(test=test, body=[_set(name, number, test)], orelse=[]), test)
        if number == 0:
            statements.append(record)
        else:  # tested only while no test before it was true
            statements.append(_at(ast.If(test=_compare(name, ast.Eq(), none, test), body=[record], orelse=[]), test))
    branches: list[tuple[list[ast.stmt], ast.AST]] = [(bodies[number], tests[number]) for number in range(none)]
    if last:
        branches.append((last, last[0]))
    statements.extend(_dispatch(name, branches, 0, len(branches), none))
    return statements


def _dispatch(name: str, branches: list[tuple[list[ast.stmt], ast.AST]], low: int, high: int,
              none: int) -> list[ast.stmt]:
    """Statements running the body of branch ``elif_branch`` among ``branches[low:high]`` (a tree of
    depth log2(high - low)); the else-number with no else-body runs nothing."""
    if high - low == 1:
        body, origin = branches[low]
        if low == len(branches) - 1 and len(branches) == none:  # the last test's body: guard the else-number
            return [_at(ast.If(test=_compare(name, ast.Lt(), none, origin), body=body, orelse=[]), origin)]
        return body
    middle = (low + high + 1) // 2
    origin = branches[middle][1]
    return [_at(ast.If(test=_compare(name, ast.Lt(), middle, origin),
                       body=_dispatch(name, branches, low, middle, none),
                       orelse=_dispatch(name, branches, middle, high, none)), origin)]
