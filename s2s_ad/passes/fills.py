"""Stage 5, after ``optimize``: the arrays a reverse sweep fills or copies only to multiply them, left unmade.

Input: an adjoint ``ir.Function`` as ``optimize`` leaves it (before a target
adds its ``del`` statements), the identities (``sid``) of the user's primal statements in it,
and the ``Analysis`` of the primal (its shape classes: two values of one
class have the same shape on every run).  Output: the same function, computing
the same numbers of the same dtypes and shapes, with two kinds of waste gone
from its top-level straight-line code:

* **Spread scalars** (``spread_fills``): the adjoint of ``np.sum(a)`` (and of
  ``mean``, and of a ``keepdims`` reduction) is ``d_a = np.full(np.shape(a),
  g)``, an array of ``a``'s size, which the next rules only multiply:
  ``d_x = d_a * 2 * x``.  Where ``d_a`` is read by the assignments right
  after it alone, each reading it only through elementwise arithmetic (``+ -
  * /``, negation) beside a value of ``a``'s shape class, each product
  already has ``a``'s shape; the fill is dropped and ``g`` enters the
  products as ``np.asarray(g)``.  Each element is
  computed by the same operations on the same values, in the same dtype: the
  fill's dtype is ``np.asarray(g)``'s, and NumPy 2 types a 0-d array by its
  dtype in arithmetic, as it types the fill (a Python float ``g`` would be
  weakly typed: float32 operands would round the product to float32).  NumPy
  1 typed a 0-d array by its value: there the fills stay (``ZERO_D_TYPED``).
* **Copies of fresh adjoints** (``owned_copies``): a loop that adds into an
  adjoint element by element first takes ``d_x = writable_copy(g, x)``, a
  writable float array of ``x``'s shape.  Where ``g`` is the result of such
  elementwise arithmetic (a new array), read by nothing else, whose operands
  are numbers, values of ``x``'s shape class and spread adjoints of it (so the
  result has exactly ``x``'s shape, and is of floats: an adjoint's spread is
  never of integers), ``g`` is that array already and the copy goes.

A fact that cannot be shown leaves the code as it was: a missed fold costs an
array, a wrong one would cost the number.  A fold drops the fill's read of
``np.shape(a)``: where nothing else read ``a`` (an adjoint that returns no
value, ``grad``: ``a`` made only for the value), ``optimize.remove_dead``
then drops what made it.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np

from ..core import ir, runtime
from ..core.identity import IdentityMap
from ..rules import registry as rules
from ..analysis.inference import SCALAR
from .optimize import remove_dead

def _zero_d_typed() -> bool:
    """Whether this NumPy gives arithmetic with a 0-d float64 array a float64 result whatever the other
    operand's dtype (NumPy 2's promotion, NEP 50), as it does with a float64 array of any shape."""
    return bool((np.asarray(1.0) * np.ones(1, dtype=np.float32)).dtype == np.float64)


ZERO_D_TYPED = _zero_d_typed()


def fold_fills(fn: ir.Function, primal: frozenset[int], shape: dict[str, Any], ndim: dict[str, int]) -> ir.Function:
    """``fn`` with the spread scalars and the copies of fresh adjoints described above left out;
    ``primal`` holds the identities (``sid``) of the user's statements (never rewritten), ``shape`` and ``ndim`` the
    analysis's shape classes and ranks of the primal's values."""
    if not ZERO_D_TYPED:
        return fn
    facts = _Facts(shape, ndim)
    # The operands spread_fills wrote, by identity (the occurrence: expressions compare by value, and an
    # equal np.asarray(g) of the user's is no spread adjoint), each held so its id is not reused meanwhile.
    spreads: IdentityMap[ir.Expr, str] = IdentityMap()
    body = spread_fills(list(fn.body), primal, facts, spreads)
    body = owned_copies(body, primal, facts, spreads)
    if len(body) < len(fn.body):  # a fill or copy went, and its read of an array's shape: what only it read goes
        body = remove_dead(body)
    return dataclasses.replace(fn, body=body)


@dataclasses.dataclass(frozen=True)
class _Facts:
    shape: dict[str, Any]
    ndim: dict[str, int]

    def array_class(self, name: str) -> Any:
        """The shape class of ``name`` where it is an array of rank 1 or more, else None."""
        cls = self.shape.get(name)
        if cls is None or cls == SCALAR or self.ndim.get(name, 0) < 1:
            return None
        return cls

    def is_number(self, expr: ir.Expr) -> bool:
        """A constant int or float, or a value the analysis proves a number (shape class SCALAR)."""
        if isinstance(expr, ir.Const):
            return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
        return isinstance(expr, ir.Var) and self.shape.get(expr.name) == SCALAR


# -- reads and writes ---------------------------------------------------------------------------

def _reads(stmt: ir.Stmt) -> list[str]:
    return [n for e in ir.exprs_of(stmt) for n in ir.names_read(e)]


def _counts(body: list[ir.Stmt]) -> tuple[dict[str, int], dict[str, int]]:
    """How many times each name is read (a store into it included), and bound, in the whole function."""
    reads: dict[str, int] = {}
    binds: dict[str, int] = {}
    for stmt in ir.walk(body):
        for name in _reads(stmt):
            reads[name] = reads.get(name, 0) + 1
        for name in ir.targets_of(stmt):
            binds[name] = binds.get(name, 0) + 1
    return reads, binds


def _touches(stmts: list[ir.Stmt], names: set[str], reading: bool) -> bool:
    """Whether a statement of ``stmts`` (nested ones included) binds, stores into or (with ``reading``)
    reads one of ``names``."""
    for stmt in ir.walk(stmts):
        bound = set(ir.targets_of(stmt)) | ({stmt.array} if isinstance(stmt, ir.Store) else set())
        if bound & names or (reading and set(_reads(stmt)) & names):
            return True
    return False


def _elementwise(expr: ir.Expr) -> bool:
    """A call of elementwise arithmetic (declared ``fill_operand`` in templates/: ``+ - * /``, negation):
    its result's element i is the operation on its operands' elements at i (broadcast), a new array
    where one operand is an array."""
    return isinstance(expr, ir.Call) and not expr.kwargs and bool(rules.fact(expr.fn, "fill_operand"))


def _leaves(expr: ir.Expr) -> list[ir.Expr]:
    """The operands of the elementwise arithmetic ``expr`` is the root of (``expr`` itself if it is none)."""
    if not _elementwise(expr):
        return [expr]
    assert isinstance(expr, ir.Call)
    return [leaf for arg in expr.args for leaf in _leaves(arg)]


# -- spread scalars -------------------------------------------------------------------------------

def _spread(stmt: ir.Stmt, primal: frozenset[int]) -> Optional[tuple[ir.Expr, str]]:
    """``(g, a)`` for a generated ``t = np.full(np.shape(a), g)``, else None."""
    if stmt.sid in primal or not isinstance(stmt, ir.Assign) or not isinstance(stmt.value, ir.Call):
        return None
    call = stmt.value
    if call.fn is not np.full or call.kwargs or len(call.args) != 2:
        return None
    shape_of = call.args[0]
    if not (isinstance(shape_of, ir.Call) and shape_of.fn is np.shape and not shape_of.kwargs
            and len(shape_of.args) == 1 and isinstance(shape_of.args[0], ir.Var)):
        return None
    return call.args[1], shape_of.args[0].name


def spread_fills(body: list[ir.Stmt], primal: frozenset[int], facts: _Facts, spreads: IdentityMap[ir.Expr, str]
                 ) -> list[ir.Stmt]:
    """``body`` with each spread that the statements right after it only multiply folded into them (see
    the module docstring); the ``np.asarray(g)`` operands it writes go into ``spreads`` (by identity: the ``a``)."""
    reads, binds = _counts(body)
    body = list(body)
    i = 0
    while i < len(body):
        stmt, spread = body[i], _spread(body[i], primal)
        i += 1
        if spread is None:
            continue
        assert isinstance(stmt, ir.Assign)
        grad, like = spread
        cls, count = facts.array_class(like), reads.get(stmt.target, 0)
        if cls is None or count == 0 or binds.get(stmt.target, 0) != 1 or (count > 1 and not ir.is_atom(grad)):
            continue  # (an expression g is not written twice)
        readers = _readers(body, i, stmt.target, count)
        if readers is None or _touches(body[i:readers[-1]], set(ir.names_read(grad)) | {like}, reading=False):
            continue  # (g and a must mean at the readers what they meant at the fill)
        folds = {}
        for j in readers:
            reader = body[j]
            assert isinstance(reader, ir.Assign)
            operand = ir.Call(np.asarray, (grad,))
            folded = _folded(reader.value, stmt.target, operand, cls, facts)
            if folded is None:
                break
            folds[j] = (ir.Assign(reader.target, folded, reader.line, reader.merge), operand)
        if len(folds) != len(readers):
            continue
        for j, (assign, operand) in folds.items():
            spreads[operand] = like
            body[j] = assign
        del body[i - 1]
        i -= 1
    return body


def _readers(body: list[ir.Stmt], start: int, name: str, count: int) -> Optional[list[int]]:
    """The positions of the top-level assignments from ``start`` on that make the ``count`` reads of
    ``name``, if nothing but assignments (and comments) comes before the last of them."""
    found: list[int] = []
    seen = 0
    for j in range(start, len(body)):
        stmt = body[j]
        if not isinstance(stmt, (ir.Assign, ir.Comment)):
            return None
        here = _reads(stmt).count(name)
        if here:
            found.append(j)
            seen += here
            if seen == count:
                return found
    return None


def _folded(expr: ir.Expr, name: str, operand: ir.Expr, cls: Any, facts: _Facts) -> Optional[ir.Expr]:
    """``expr`` with its reads of ``name`` replaced by ``operand``, where each is an operand of
    elementwise arithmetic (whatever reads that arithmetic's result: ``np.sum(d_a * x, axis=0)``)
    another of whose operands is a value of shape class ``cls``, so that the arithmetic's result is
    the same array; else None."""
    replaced = _in_arithmetic(expr, name, operand, cls, facts)
    if replaced is None or name in ir.names_read(replaced):
        return None  # (read elsewhere than as an operand of such arithmetic)
    return replaced


def _in_arithmetic(expr: ir.Expr, name: str, operand: ir.Expr, cls: Any, facts: _Facts) -> Optional[ir.Expr]:
    if _elementwise(expr):  # the root of the largest elementwise arithmetic here
        leaves = _leaves(expr)
        if ir.Var(name) not in leaves:
            return expr
        if not any(isinstance(leaf, ir.Var) and leaf.name != name and facts.array_class(leaf.name) == cls
                   for leaf in leaves):
            return None
        return _replaced_leaf(expr, name, operand)  # (one operand object for every read: one key in spreads)
    if isinstance(expr, ir.Call) and name in ir.names_read(expr):
        args = [_in_arithmetic(a, name, operand, cls, facts) for a in expr.args]
        kwargs = [(k, _in_arithmetic(v, name, operand, cls, facts)) for k, v in expr.kwargs]
        if any(a is None for a in args) or any(v is None for _, v in kwargs):
            return None
        return ir.Call(expr.fn, tuple(a for a in args if a is not None),
                       tuple((k, v) for k, v in kwargs if v is not None))
    return expr  # (a read of name left here is found by the caller)


def _replaced_leaf(expr: ir.Expr, name: str, operand: ir.Expr) -> ir.Expr:
    if expr == ir.Var(name):
        return operand
    if not _elementwise(expr):
        return expr
    assert isinstance(expr, ir.Call)
    return ir.Call(expr.fn, tuple(_replaced_leaf(arg, name, operand) for arg in expr.args))


# -- copies of fresh adjoints ----------------------------------------------------------------------

def owned_copies(body: list[ir.Stmt], primal: frozenset[int], facts: _Facts, spreads: IdentityMap[ir.Expr, str]
                 ) -> list[ir.Stmt]:
    """``body`` without the ``writable_copy`` of an adjoint that is already a new array of the right
    shape and of floats, read by nothing else (see the module docstring); ``spreads`` holds the
    spread adjoints ``spread_fills`` wrote."""
    body = list(body)
    j = 0
    while j < len(body):
        stmt = body[j]
        j += 1
        copied = _copy_of(stmt)
        if copied is None:
            continue
        assert isinstance(stmt, ir.Assign)
        grad, like = copied
        cls = facts.array_class(like)
        k = _binding(body, j - 1, grad)
        if cls is None or k is None:
            continue
        made = body[k]
        assert isinstance(made, ir.Assign)
        if made.sid in primal or not _fresh_float_array(made.value, cls, facts, spreads):
            continue
        reads, binds = _counts(body)
        between = body[k + 1:j - 1]
        target = stmt.target
        if target == grad:  # d_x = writable_copy(d_x, x): d_x's value read by the copy alone
            if binds.get(grad, 0) != 2 or _touches(between, {grad}, reading=True):
                continue
            del body[j - 1]
        else:  # d_x = writable_copy(g, x): g read by the copy alone; d_x takes g's statement
            if reads.get(grad, 0) != 1 or binds.get(grad, 0) != 1 or binds.get(target, 0) != 1 \
                    or _touches(between, {target}, reading=True):
                continue
            body[k] = ir.Assign(target, made.value, made.line, made.merge)
            del body[j - 1]
        j -= 1
    return body


def _copy_of(stmt: ir.Stmt) -> Optional[tuple[str, str]]:
    """``(g, x)`` for ``d = writable_copy(g, x)`` of two names, else None."""
    if not isinstance(stmt, ir.Assign) or not isinstance(stmt.value, ir.Call):
        return None
    call = stmt.value
    if call.fn is not runtime.writable_copy or call.kwargs or len(call.args) != 2:
        return None
    grad, like = call.args
    if not (isinstance(grad, ir.Var) and isinstance(like, ir.Var)):
        return None
    return grad.name, like.name


def _binding(body: list[ir.Stmt], before: int, name: str) -> Optional[int]:
    """The position of the top-level assignment of ``name`` last before ``before``, if no statement
    nested in a block between binds it."""
    for k in range(before - 1, -1, -1):
        stmt = body[k]
        if isinstance(stmt, ir.Assign) and stmt.target == name:
            return k
        if _touches([stmt], {name}, reading=False):
            return None
    return None


def _fresh_float_array(expr: ir.Expr, cls: Any, facts: _Facts, spreads: IdentityMap[ir.Expr, str]) -> bool:
    """Whether ``expr`` makes a new array of shape class ``cls``, of floats: elementwise arithmetic
    whose operands are numbers, values of class ``cls`` (one at least) and spread adjoints of such
    values (``spreads``, one at least: an adjoint's dtype, never integers)."""
    if not _elementwise(expr):
        return False
    spread = same = False
    for leaf in _leaves(expr):
        like = spreads.get(leaf)
        if like is not None and facts.array_class(like) == cls:
            spread = True
        elif isinstance(leaf, ir.Var) and facts.array_class(leaf.name) == cls:
            same = True
        elif not facts.is_number(leaf):
            return False
    return spread and same
