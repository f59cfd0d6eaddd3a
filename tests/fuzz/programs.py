"""Random differentiable programs written the way users write them, drawn with hypothesis.

``write_program(draw)`` returns a ``Program``: the source of a module defining
``f(x, y, v, m, n)`` (``x``, ``y`` floats, ``v`` a float array of shape (3,),
``m`` one of shape (2, 3), ``n`` the int 3), which returns a number, and
``fv`` with the same body returning an array (for ``vjp``), plus the helpers
they call.  Every choice is a hypothesis draw, so a failing program shrinks
to a small one.  Values stay bounded: divisions are by ``1.5 + b * b``,
exponentials of ``tanh``, and loop recurrences contract.

The generator is made of features, each switched on or off in ``FEATURES``
(the defaults) or by the environment variable ``S2S_FUZZ_FEATURES``
(``all``; ``all,-views``; ``+views,-float32``; or an exact list
``core,masks``).  Statement features:

- ``core``: nested arithmetic, ``math`` and NumPy calls, conditional
  expressions, branches, ``for`` loops with ``continue``, ``break`` and
  ``checkpointed``, data-dependent ``while`` loops, scalar helpers (returning
  tuples too), a nested function capturing a number, element writes in a loop
  (``out[j] = ...``), lists built by ``append``, swaps, augmented assignments;
- ``kind_change``: values that change kind in a loop or a branch
  (``acc = 0.0`` then ``acc = acc * 0.5 + v``; an int that becomes a float;
  a number on one branch and an array on the other);
- ``slice_writes``: in-place writes through slices of a local copy
  (``w[0:2] = w[0:2] ** 2``, ``w[1:] = np.sin(w[1:])``, ``w[0:2] *= w[1:3]``,
  ``w[::2] += s``, ``w[1] = w[0] * w[2]``), also in a helper on its own copy;
- ``arith_copy``: a new array made by arithmetic (``np.sin(v) * 1.0``,
  ``v + 0.0``), then written into;
- ``masks``: boolean masks read and written (``w[w > 0.2] = w[w > 0.2] ** 2``,
  ``w[w > 0.2] = a[w > 0.2]``, ``w[v < 0.0] *= 0.5``, ``np.sum(v[v > 0.1])``);
- ``scalar_fill``: one number written through a mask, an index list or a
  slice (``w[w > 0.2] = s``, ``w[[0, 2]] = s``, ``w[1:] = s``);
- ``fancy_index``: integer-array and list-display indices with repeated
  entries, read and written in the same statement (``v[[0, 0]]``,
  ``b[[2, 1, 2]] += v``, ``b[[0, 2]] = b[[2, 0]]``, ``v[np.array([1, 1, 0])]``);
- ``views``: slices, rows, ``.T`` and ``reshape`` of a local array read
  before and after a write into it, taken with ``.copy()`` or raw (a raw view
  read after the write shows it, as NumPy's; where NumPy made a copy instead
  the read is refused with a documented TransformError, so the program carries
  the marker ``# refusal-ok``);
- ``array_helpers``: helpers that take an array, write into a local array and
  return it; and helpers that write into the array they are given (the caller's
  array changes, as in NumPy; where the call stays a call, a documented refusal,
  marked);
- ``nested_defs``: nested functions capturing arrays, calling each other,
  called in loops, and redefined under the same name;
- ``broadcast_loops``: values whose shape changes from trip to trip
  (``acc = x`` then ``acc = acc * 0.5 + m * v``: () to (2, 3); (1,) to (3,)
  to (2, 3));
- ``concat``: list and tuple concatenation (``[a, b] + [c]``,
  ``(a,) + (b, c)``, ``lst * 2``, ``np.array([...])`` of numbers);
- ``two_d``: 2-D arrays: ``m @ v``, ``m.T``, rows and columns, reductions by
  axis, element and row writes into a copy.

Argument and oracle features (used by test_fuzz.py): ``float32`` (``v`` and
``m`` passed as float32 arrays too), ``vjp_twice`` (``fv``'s pullback called
twice: the same adjoints, the primal output unchanged), ``jax`` (the
program translated to jax.numpy and its gradient compared, for programs
without subscript writes, when JAX is installed), ``second_order`` (one
program in five: forward over reverse against differences of the gradient;
only programs whose subscript writes all come from ``core`` unless
``second_order_writes`` is on too), ``autograd`` (autograd's gradient
compared, for programs without subscript writes, ``math.`` calls, ``float``
or ``.copy()``, when autograd is installed).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable

from hypothesis import strategies as st

Draw = Callable[[Any], Any]

# Which features run by default: all of them (S2S_FUZZ_FEATURES switches any off, to chase one class).
FEATURES: dict[str, bool] = {
    "core": True,
    "kind_change": True,
    "slice_writes": True,
    "arith_copy": True,
    "masks": True,
    "scalar_fill": True,
    "fancy_index": True,
    "views": True,
    "array_helpers": True,
    "nested_defs": True,
    "broadcast_loops": True,
    "concat": True,
    "two_d": True,
    "float32": True,
    "vjp_twice": True,
    "jax": True,
    "second_order": True,
    "second_order_writes": True,
    "autograd": True,
}


def enabled_features(setting: str | None = None) -> frozenset[str]:
    """The features switched on: ``FEATURES``'s defaults, changed by ``S2S_FUZZ_FEATURES``.

    ``all`` starts from every feature, ``none`` from none, ``+name``/``-name``
    add or remove one from the defaults (or from what precedes), and plain
    names list the exact set.
    """
    setting = os.environ.get("S2S_FUZZ_FEATURES", "") if setting is None else setting
    items = [item.strip() for item in setting.split(",") if item.strip()]
    if not items:
        return frozenset(name for name, on in FEATURES.items() if on)
    plain = [item for item in items if item[0] not in "+-" and item not in ("all", "none")]
    if items[0] == "all":
        chosen = set(FEATURES)
    elif items[0] == "none" or plain:
        chosen = set()
    else:
        chosen = {name for name, on in FEATURES.items() if on}
    for item in items:
        name = item.lstrip("+-")
        if name in ("all", "none"):
            continue
        if name not in FEATURES:
            raise ValueError(f"S2S_FUZZ_FEATURES: unknown feature {name!r} (known: {', '.join(FEATURES)})")
        (chosen.discard if item.startswith("-") else chosen.add)(name)
    return frozenset(chosen)


@dataclass(frozen=True)
class Program:
    """A generated module's source, and what the checks need to know about it."""

    source: str
    writes: bool  # assigns into a subscript (JAX and autograd have no in-place writes)
    feature_writes: bool  # ... in a statement of a feature other than core (see second_order_writes)
    refusal_ok: bool  # holds a construct docs/supported-python.md documents as refused


_CONSTANTS = ("0.5", "1.5", "2.0", "0.25", "0.75")
_SCALAR_UNARY = ("-({a})", "math.sin({a})", "math.cos({a})", "math.tanh({a})", "np.tanh({a})",
                 "math.exp(math.tanh({a}))", "({a}) ** 2", "math.sqrt(1.0 + {a} * {a})", "np.sin({a})",
                 "float({a})", "abs({a})", "math.atan({a})", "np.log1p({a} * {a})")
_SCALAR_BINARY = ("{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / (1.5 + {b} * {b})", "max({a}, {b})",
                  "min({a}, {b})", "({a} if {a} > {b} else {b} * 0.5)", "math.hypot({a}, 0.5 + {b} * {b})")
_ARRAY_UNARY = ("np.sin({A})", "np.tanh({A})", "np.exp(np.tanh({A}))", "{A} ** 2", "np.sqrt(1.0 + {A} * {A})",
                "{A}[::-1]", "np.concatenate([{A}[1:], {A}[:1]])", "np.clip({A}, -0.5, 0.5)", "np.abs({A})",
                "np.roll({A}, 1)", "{A} - np.mean({A})")
_ARRAY_BINARY = ("{A} + {B}", "{A} * {B}", "{A} / (1.0 + {B} * {B})", "np.maximum({A}, {B})",
                 "np.where({A} > {B}, {A}, {B} * 0.5)", "np.outer({A}, {B}) @ {A}", "{A} * {s}", "{A} + {s}")
_REDUCTIONS = ("np.sum({A})", "np.mean({A})", "np.max({A})", "np.dot({A}, {B})", "{A}[{k}]",
               "np.sum({A}[1:] * {A}[:-1])", "np.prod(1.0 + 0.1 * {A})")
# 2-D: M is (2, 3); results are (3,) vectors or numbers
_MATRIX_TO_VECTOR = ("np.sum({M}, axis=0)", "np.mean({M}, axis=0)", "{M}[{r}]", "{M}.T @ ({M} @ {A})",
                     "({M} * {A})[{r}]", "np.max({M}, axis=0)", "{M}[{r}, ::-1]")
_MATRIX_TO_SCALAR = ("np.sum({M})", "np.sum({M} @ {A})", "np.trace({M} @ {M}.T)", "{M}[{r}, {k}]",
                     "np.sum({M}[:, 1:] * {M}[:, :-1])", "np.mean(np.tanh({M}))")
_MATRIX_UNARY = ("np.sin({M})", "{M} * {A}", "{M} + {A}", "{M} ** 2", "np.tanh({M}) * {s}",
                 "{M}[::-1]", "{M}.T.T", "np.exp(np.tanh({M}))")

_SUBSCRIPT_WRITE = re.compile(r"\]\s*(=|\+=|-=|\*=)[^=]")
# docs/supported-python.md documents these refusals: a view the memory model cannot take again read after a
# write (a copy made by a step that makes views only sometimes), a write into an argument
_REFUSAL_MARK = "  # refusal-ok"


class ProgramWriter:
    """Builds one program statement by statement, keeping track of the names in scope."""

    def __init__(self, draw: Draw, features: frozenset[str]) -> None:
        self.draw = draw
        self.features = features
        self.lines: list[str] = []
        self.helpers: list[str] = []
        self.scalars = ["x", "y"]
        self.arrays = ["v"]
        self.matrices = ["m"] if "two_d" in features else []
        self.count = 0
        self.writes = False
        self.feature_writes = False
        self.refusal_ok = False

    def pick(self, options: Any) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"{base}{self.count}"

    def coin(self) -> bool:
        return self.draw(st.booleans())

    # -- expressions -------------------------------------------------------

    def scalar(self, depth: int) -> str:
        if depth <= 0 or self.draw(st.integers(0, 3)) == 0:
            kind = self.pick(["var", "var", "const", "reduce"] + (["matrix"] if self.matrices else []))
            if kind == "var":
                return self.pick(self.scalars)
            if kind == "const":
                return self.pick(_CONSTANTS)
            if kind == "matrix":
                return self.pick(_MATRIX_TO_SCALAR).format(M=self.pick(self.matrices), A=self.array(0),
                                                           r=self.pick("01"), k=self.pick("012"))
            return self.pick(_REDUCTIONS).format(A=self.array(0), B=self.array(0), k=self.pick("012"))
        if self.coin():
            return "(" + self.pick(_SCALAR_UNARY).format(a=self.scalar(depth - 1)) + ")"
        return "(" + self.pick(_SCALAR_BINARY).format(a=self.scalar(depth - 1), b=self.scalar(depth - 1)) + ")"

    def array(self, depth: int) -> str:
        if depth <= 0 or self.draw(st.integers(0, 2)) == 0:
            if self.matrices and self.draw(st.integers(0, 3)) == 0:
                return "(" + self.pick(_MATRIX_TO_VECTOR).format(M=self.pick(self.matrices), A=self.pick(self.arrays),
                                                                 r=self.pick("01")) + ")"
            return self.pick(self.arrays)
        if self.coin():
            return "(" + self.pick(_ARRAY_UNARY).format(A=self.array(depth - 1)) + ")"
        return "(" + self.pick(_ARRAY_BINARY).format(A=self.array(depth - 1), B=self.array(depth - 1),
                                                    s=self.scalar(0)) + ")"

    def matrix(self, depth: int) -> str:
        if depth <= 0 or self.coin():
            return self.pick(self.matrices)
        return "(" + self.pick(_MATRIX_UNARY).format(M=self.matrix(depth - 1), A=self.array(0),
                                                     s=self.scalar(0)) + ")"

    def copy_of_array(self) -> str:
        """A new local array (never the argument itself): writing into it is allowed."""
        return self.pick(["{A}.copy()", "np.copy({A})", "np.array({A})"]).format(A=self.array(1))

    # -- statements ----------------------------------------------------------

    def emit(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    def statement(self) -> None:
        # a feature first, then one of its statements: each feature switched on gets an even share
        features = [feature for feature in _STATEMENTS if feature in self.features]
        if features:
            feature = self.pick(features)
            lines, helpers = len(self.lines), len(self.helpers)
            getattr(self, "_" + self.pick(_STATEMENTS[feature]))()
            new = "\n".join(self.lines[lines:] + self.helpers[helpers:])
            if feature != "core" and _SUBSCRIPT_WRITE.search(new):
                self.feature_writes = True

    # core

    def _assign_scalar(self) -> None:
        name = self.fresh("a")
        self.emit(f"{name} = {self.scalar(3)}")
        self.scalars.append(name)

    def _assign_array(self) -> None:
        name = self.fresh("w")
        self.emit(f"{name} = {self.array(2)}")
        self.arrays.append(name)

    def _branch(self) -> None:
        name = self.fresh("b")
        self.emit(f"if {self.scalar(1)} > {self.scalar(1)}:")
        self.emit(f"{name} = {self.scalar(2)}", 2)
        if self.coin():
            self.emit("else:")
            self.emit(f"{name} = {self.scalar(2)}", 2)
        else:  # assigned on one path only: defined before
            self.lines.insert(len(self.lines) - 2, f"    {name} = {self.scalar(1)}")
        self.scalars.append(name)

    def _for_loop(self) -> None:
        s = self.fresh("s")
        self.emit(f"{s} = {self.scalar(1)}")
        exit_kind = self.pick(["none", "none", "continue", "break", "checkpointed"])
        if exit_kind == "checkpointed":  # segments replayed in the reverse sweep
            self.emit(f"for i in s2s_ad.checkpointed(range(n), every={self.pick(['None', '1', '2'])}):")
        else:
            self.emit("for i in range(n):")
        if exit_kind == "continue":
            self.emit("if i == 1:", 2)
            self.emit("continue", 3)
        if exit_kind == "break":
            self.emit(f"if {s} > 2.5:", 2)
            self.emit("break", 3)
        self.scalars.append("i")
        step = self.scalar(2)
        self.scalars.remove("i")
        self.emit(f"{s} = {s} * 0.8 + math.tanh({step}) * 0.5", 2)
        self.scalars.append(s)

    def _while_loop(self) -> None:
        t, k = self.fresh("t"), self.fresh("k")
        self.emit(f"{t} = {self.scalar(1)}")
        self.emit(f"{k} = 0")
        self.emit(f"while {t} < 2.0 and {k} < 6:")
        self.emit(f"{t} = {t} + 0.3 + 0.1 * math.tanh({self.scalar(1)})", 2)
        self.emit(f"{k} = {k} + 1", 2)
        self.scalars.append(t)

    def _array_writes(self) -> None:
        out = self.fresh("out")
        self.emit(f"{out} = np.zeros(3)")
        self.emit("for j in range(3):")
        self.scalars.append("v[j]")
        value = self.scalar(2)
        self.scalars.remove("v[j]")
        self.emit(f"{out}[j] {'+=' if self.coin() else '='} {value}", 2)
        self.arrays.append(out)
        self.writes = True

    def _helper_call(self) -> None:
        helper = self.fresh("h")
        saved = self.scalars, self.arrays, self.matrices
        self.scalars, self.arrays, self.matrices = ["p", "q"], ["v"], []
        body = self.scalar(2)
        self.scalars, self.arrays, self.matrices = saved
        self.helpers.append(f"def {helper}(p, q, v):\n    return {body}\n")
        name = self.fresh("c")
        self.emit(f"{name} = {helper}({self.scalar(1)}, {self.scalar(1)}, {self.array(1)})")
        self.scalars.append(name)

    def _tuple_helper(self) -> None:
        helper = self.fresh("pair")
        self.helpers.append(f"def {helper}(p):\n    return p * 0.5 + 1.0, math.sin(p) * p\n")
        first, second = self.fresh("u"), self.fresh("u")
        self.emit(f"{first}, {second} = {helper}({self.scalar(2)})")
        self.scalars += [first, second]

    def _swap(self) -> None:
        if len(self.scalars) < 2:
            return
        a, b = self.pick(self.scalars), self.pick(self.scalars)
        if a != b and a not in ("x", "y") and b not in ("x", "y"):
            self.emit(f"{a}, {b} = {b} * 0.5, {a}")

    def _list_loop(self) -> None:
        items, total = self.fresh("items"), self.fresh("total")
        self.emit(f"{items} = []")
        self.emit("for i in range(n):")
        self.emit(f"{items}.append({self.scalar(1)} * (i + 1.0))", 2)
        self.emit(f"{total} = sum({items}) + {items}[0]")
        self.scalars.append(total)

    def _augmented(self) -> None:
        targets = [s for s in self.scalars if s not in ("x", "y")]
        if targets:
            self.emit(f"{self.pick(targets)} {self.pick(['+=', '-=', '*='])} {self.scalar(1)}")

    def _nested_function(self) -> None:
        inner, name = self.fresh("inner"), self.fresh("e")
        captured = self.pick(self.scalars)
        self.emit(f"def {inner}(t):")
        self.emit(f"return t * {captured} + math.sin(t)", 2)
        self.emit(f"{name} = {inner}({self.scalar(1)})")
        self.scalars.append(name)

    # kind_change

    def _kind_change(self) -> None:
        acc = self.fresh("acc")
        variant = self.pick(["to_array", "int_to_float", "branch"])
        if variant == "to_array":  # a number before the loop, an array after its first trip
            self.emit(f"{acc} = {self.pick(['0.0', '0', self.scalar(1)])}")
            self.emit("for i in range(n):")
            self.emit(f"{acc} = {acc} * 0.5 + {self.array(1)}", 2)
            self.arrays.append(acc)
        elif variant == "int_to_float":
            self.emit(f"{acc} = 0")
            self.emit("for i in range(n):")
            self.emit(f"{acc} = {acc} + {self.scalar(1)} * 0.5", 2)
            self.scalars.append(acc)
        else:  # a number on one path, an array on the other; used through np.sum
            self.emit(f"if {self.scalar(1)} > {self.scalar(1)}:")
            self.emit(f"{acc} = {self.scalar(1)}", 2)
            self.emit("else:")
            self.emit(f"{acc} = {self.array(1)}", 2)
            total = self.fresh("a")
            self.emit(f"{total} = np.sum({acc} * {self.array(0)})")
            self.scalars.append(total)

    # slice_writes

    def _slice_writes(self) -> None:
        w = self.fresh("w")
        self.emit(f"{w} = {self.copy_of_array()}")
        writes = [f"{w}[0:2] = {w}[0:2] ** 2", f"{w}[1:] = np.sin({w}[1:])", f"{w}[0:2] *= {w}[1:3]",
                  f"{w}[::2] += {{s}}", f"{w}[1] = {w}[0] * {w}[2]", f"{w}[:] = {w}[::-1] * {{s}}",
                  f"{w}[1:] -= {w}[:-1] * 0.5", f"{w}[-1] = math.tanh({w}[-1] + {{s}})"]
        for _ in range(self.draw(st.integers(1, 3))):
            self.emit(self.pick(writes).format(s=self.scalar(1)))
        self.arrays.append(w)
        self.writes = True
        if self.coin():  # the same in a helper, on the array it made
            helper, name = self.fresh("hs"), self.fresh("w")
            self.helpers.append(f"def {helper}(a, s):\n    b = a.copy()\n    b[0] = b[0] * s\n"
                                f"    b[1:] = b[1:] + np.sin(b[:-1])\n    return b\n")
            self.emit(f"{name} = {helper}({self.array(1)}, {self.scalar(1)})")
            self.arrays.append(name)

    # arith_copy

    def _arith_copy(self) -> None:
        w = self.fresh("w")
        self.emit(f"{w} = {self.pick(['{A} * 1.0', '{A} + 0.0', 'np.sin({A}) * 1.0'])}".format(A=self.array(1)))
        self.emit(f"{w}[{self.pick('012')}] = {self.scalar(1)}")
        self.arrays.append(w)
        self.writes = True

    # masks

    def _masks(self) -> None:
        variant = self.pick(["read", "write", "write_read", "scale"])
        if variant == "read":
            name = self.fresh("a")
            a = self.array(1)
            self.emit(f"{name} = np.sum({a}[{a} > {self.pick(['0.1', '-0.2', '0.0'])}]) + {self.scalar(0)}")
            self.scalars.append(name)
            return
        w = self.fresh("w")
        self.emit(f"{w} = {self.copy_of_array()}")
        if variant == "write":
            self.emit(f"{w}[{w} > 0.2] = ({self.array(1)})[{w} > 0.2]")
        elif variant == "write_read":
            self.emit(f"{w}[{w} > 0.2] = {w}[{w} > 0.2] ** 2")
        else:
            self.emit(f"{w}[{self.array(0)} < 0.0] *= 0.5")
        self.arrays.append(w)
        self.writes = True

    # scalar_fill

    def _scalar_fill(self) -> None:
        w = self.fresh("w")
        self.emit(f"{w} = {self.copy_of_array()}")
        target = self.pick([f"{w} > 0.2", f"{w} < 0.0", "[0, 2]", "[1, 1]", "1:"])
        self.emit(f"{w}[{target}] = {self.scalar(1)}")
        self.arrays.append(w)
        self.writes = True

    # fancy_index

    def _fancy_index(self) -> None:
        variant = self.pick(["read_repeated", "read_array", "add_repeated", "swap", "set_repeated"])
        if variant == "read_repeated":
            name = self.fresh("a")
            self.emit(f"{name} = np.sum({self.array(1)}[[0, 0]] * {self.array(0)}[[2, 1]])")
            self.scalars.append(name)
            return
        if variant == "read_array":
            name = self.fresh("w")
            self.emit(f"{name} = {self.array(1)}[np.array([{self.pick(['1, 1, 0', '2, 0, 2', '0, 1, 2'])}])]")
            self.arrays.append(name)
            return
        b = self.fresh("w")
        self.emit(f"{b} = {self.copy_of_array()}")
        if variant == "add_repeated":
            self.emit(f"{b}[[2, 1, 2]] += {self.array(1)}")
        elif variant == "swap":
            self.emit(f"{b}[[0, 2]] = {b}[[2, 0]]")
        else:
            self.emit(f"{b}[[1, 1]] = {b}[[0, 2]] * {self.scalar(1)}")
        self.arrays.append(b)
        self.writes = True

    # views

    def _views(self) -> None:
        two_d = bool(self.matrices) and self.coin()
        w = self.fresh("w")
        if two_d:
            self.emit(f"{w} = {self.matrix(1)}.copy()")
            take = self.pick([f"{w}[0]", f"{w}[:, 1]", f"{w}.T", f"{w}.reshape(6)", f"{w}[1, 1:]"])
            write = self.pick([f"{w}[0, 0] = {{s}}", f"{w}[1] = {w}[0] * {{s}}", f"{w}[:, 2] += {{s}}"])
        else:
            self.emit(f"{w} = {self.copy_of_array()}")
            take = self.pick([f"{w}[1:]", f"{w}[::2]", f"{w}.reshape(3, 1)", f"{w}[:2]", f"{w}.T"])
            # the written values read another array: a slice write that reads its own target is slice_writes'
            write = self.pick([f"{w}[0] = {{s}}", f"{w}[1:] = {self.pick(self.arrays)}[:-1] * {{s}}", f"{w}[2] += {{s}}"])
        r, before, after = self.fresh("r"), self.fresh("a"), self.fresh("a")
        copy = self.coin()  # a raw view read after the write shows it, as NumPy's (taken again: issue 31)
        self.emit(f"{r} = {take}{'.copy()' if copy else ''}")
        self.emit(f"{before} = np.sum({r} * 0.5)")  # read before the write: always fine
        self.emit(write.format(s=self.scalar(1)))
        self.writes = True
        if copy or self.coin():
            self.emit(f"{after} = np.sum(np.sin({r}))")  # a raw view read after the write: taken again
            if not copy:  # (where a step is a view only sometimes, a copy is refused where the code runs)
                self.lines[-1] += _REFUSAL_MARK
                self.refusal_ok = True
            self.scalars.append(after)
        self.scalars.append(before)
        if not two_d:
            self.arrays.append(w)
        else:
            self.matrices.append(w)

    # array_helpers

    def _array_helpers(self) -> None:
        helper = self.fresh("hw")
        variant = self.pick(["local_copy", "local_zeros", "local_copy", "writes_argument"])
        if variant == "local_copy":
            body = ("    b = a.copy()\n    b[0] = b[0] * s\n    b[1:] = b[1:] + np.sin(a[:-1])\n    return b\n")
        elif variant == "local_zeros":
            body = ("    b = np.zeros(3)\n    for j in range(3):\n        b[j] = a[j] * s + a[2 - j]\n"
                    "    b[0:2] *= a[1:3]\n    return b\n")
        else:  # writes into the caller's local array: lowered in place (the caller's array changes), or refused
            body = "    a[0] = a[0] * s" + _REFUSAL_MARK + "\n    return a\n"
            self.refusal_ok = True
        self.helpers.append(f"def {helper}(a, s):\n{body}")
        name = self.fresh("w")
        argument = self.copy_of_array() if variant == "writes_argument" else self.array(1)
        self.emit(f"{name} = {helper}({argument}, {self.scalar(1)})")
        self.arrays.append(name)
        self.writes = True

    # nested_defs

    def _nested_defs(self) -> None:
        inner, other, name = self.fresh("inner"), self.fresh("inner"), self.fresh("e")
        variant = self.pick(["captures_array", "calls_another", "in_loop", "redefined"])
        captured = self.pick(self.arrays)
        if variant == "captures_array":
            self.emit(f"def {inner}(t):")
            self.emit(f"return np.sum({captured} * t) + math.cos(t)", 2)
            self.emit(f"{name} = {inner}({self.scalar(1)})")
        elif variant == "calls_another":
            self.emit(f"def {other}(t):")
            self.emit(f"return t * {self.pick(self.scalars)}", 2)
            self.emit(f"def {inner}(t):")
            self.emit(f"return {other}(t) + np.sum(np.tanh({captured} * t))", 2)
            self.emit(f"{name} = {inner}({self.scalar(1)})")
        elif variant == "in_loop":
            self.emit(f"def {inner}(t, k):")
            self.emit(f"return t * 0.5 + {captured}[k] * 0.25", 2)
            self.emit(f"{name} = {self.scalar(1)}")
            self.emit("for i in range(n):")
            self.emit(f"{name} = {inner}({name}, i)", 2)
        else:  # the same name bound to a second function: calls after it must use the new one
            self.emit(f"def {inner}(t):")
            self.emit(f"return t * {self.pick(self.scalars)}", 2)
            self.emit(f"{name} = {inner}({self.scalar(1)})")
            self.emit(f"def {inner}(t):")
            self.emit("return t * t + 0.5", 2)
            self.emit(f"{name} = {name} + {inner}({self.scalar(1)})")
        self.scalars.append(name)

    # broadcast_loops

    def _broadcast_loops(self) -> None:
        acc = self.fresh("acc")
        shapes = ["vector"] + (["matrix", "grow"] if self.matrices else [])
        variant = self.pick(shapes)
        if variant == "vector":  # () then (3,)
            self.emit(f"{acc} = {self.scalar(1)}")
            self.emit("for i in range(n):")
            self.emit(f"{acc} = {acc} * 0.5 + {self.array(1)} * {self.scalar(0)}", 2)
        elif variant == "matrix":  # () then (2, 3)
            self.emit(f"{acc} = {self.scalar(1)}")
            self.emit("for i in range(n):")
            self.emit(f"{acc} = {acc} * 0.5 + {self.matrix(1)} * {self.array(0)}", 2)
        else:  # (1,) then (3,) then (2, 3)
            self.emit(f"{acc} = np.ones(1) * {self.scalar(1)}")
            self.emit("for i in range(n):")
            self.emit("if i == 0:", 2)
            self.emit(f"{acc} = {acc} * {self.array(1)}", 3)
            self.emit("else:", 2)
            self.emit(f"{acc} = 0.5 * {acc} + {self.matrix(0)} * 0.25", 3)
        total = self.fresh("a")
        self.emit(f"{total} = np.sum({acc})")
        self.scalars.append(total)

    # concat

    def _concat(self) -> None:
        items, name = self.fresh("items"), self.fresh("a")
        variant = self.pick(["list", "tuple", "repeat", "array"])
        a, b, c = self.scalar(1), self.scalar(1), self.scalar(0)
        if variant == "list":
            self.emit(f"{items} = [{a}, {b}] + [{c}]")
            self.emit(f"{name} = sum({items}) + {items}[2] * {items}[0]")
        elif variant == "tuple":
            self.emit(f"{items} = ({a},) + ({b}, {c})")
            self.emit(f"{name} = {items}[0] * {items}[1] + {items}[-1]")
        elif variant == "repeat":
            self.emit(f"{items} = [{a}, {b}] * 2")
            self.emit(f"{name} = {items}[3] * {items}[0] + sum({items})")
        else:
            self.emit(f"{items} = [{a}] + [{b}, {c}]")
            array = self.fresh("w")
            self.emit(f"{array} = np.array({items}) * {self.array(0)}")
            self.emit(f"{name} = np.sum({array})")
            self.arrays.append(array)
        self.scalars.append(name)

    # two_d

    def _two_d(self) -> None:
        if not self.matrices:
            return
        variant = self.pick(["matrix", "vector", "writes"])
        if variant == "matrix":
            name = self.fresh("M")
            self.emit(f"{name} = {self.matrix(2)}")
            self.matrices.append(name)
        elif variant == "vector":
            name = self.fresh("w")
            self.emit(f"{name} = {self.pick(_MATRIX_TO_VECTOR).format(M=self.matrix(1), A=self.array(0), r=self.pick('01'))}")
            self.arrays.append(name)
        else:
            name = self.fresh("M")
            self.emit(f"{name} = {self.matrix(1)}.copy()")
            self.emit(self.pick([f"{name}[0] = {name}[1] * {{s}}", f"{name}[:, 0] += {self.array(0)}[:2]",
                                 f"{name}[1, 1:] = np.sin({name}[0, :2])", f"{name}[0, 2] *= {{s}}"])
                      .format(s=self.scalar(1)))
            self.matrices.append(name)
            self.writes = True

    # -- the module ------------------------------------------------------------

    def source(self) -> str:
        # every value made contributes to the result, so no statement's derivative goes unchecked
        terms = [self.pick(self.scalars) for _ in range(2)] + [name for name in self.scalars if name not in "xy"]
        terms += [f"np.sum({name})" for name in self.arrays] + [f"np.sum({name}) * 0.5" for name in self.matrices]
        vector = f"{self.pick(self.arrays)} * {self.pick(self.scalars)} + x * y"
        body = "\n".join(self.lines)
        return ("import math\n\nimport numpy as np\n\nimport s2s_ad\n\n\n" + "\n\n".join(self.helpers) + "\n\n"
                + "def f(x, y, v, m, n):\n" + body + f"\n    return {' + '.join(terms)} + x * y\n\n\n"
                + "def fv(x, y, v, m, n):\n" + body + f"\n    return {vector}\n")


_STATEMENTS: dict[str, list[str]] = {
    "core": ["assign_scalar", "assign_scalar", "assign_array", "branch", "for_loop", "while_loop", "array_writes",
             "helper_call", "tuple_helper", "swap", "list_loop", "augmented", "nested_function"],
    "kind_change": ["kind_change"],
    "slice_writes": ["slice_writes"],
    "arith_copy": ["arith_copy"],
    "masks": ["masks"],
    "scalar_fill": ["scalar_fill"],
    "fancy_index": ["fancy_index"],
    "views": ["views"],
    "array_helpers": ["array_helpers"],
    "nested_defs": ["nested_defs"],
    "broadcast_loops": ["broadcast_loops"],
    "concat": ["concat"],
    "two_d": ["two_d", "assign_array"],
}


def write_program(draw: Draw, features: frozenset[str] | None = None) -> Program:
    writer = ProgramWriter(draw, enabled_features() if features is None else features)
    for _ in range(draw(st.integers(1, 6))):
        writer.statement()
    return Program(writer.source(), writer.writes, writer.feature_writes, writer.refusal_ok)
