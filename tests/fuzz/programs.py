"""Random differentiable programs in s2s_ad's supported subset, drawn with hypothesis.

``write_program(draw)`` returns the source of a module defining ``f(x, y, v, n)``
(``x``, ``y`` floats, ``v`` a float array of shape (3,), ``n`` an int) and the
helpers it calls.  Every choice is a hypothesis draw, so a failing program
shrinks to a small one.  The grammar covers nested arithmetic, ``math`` and
NumPy calls, conditional expressions, branches, ``for`` loops with
``continue`` and ``break``, data-dependent ``while`` loops, helper functions
(returning tuples too), nested functions, local array writes, lists and
tuples.  Values stay bounded: divisions are by ``1.5 + b * b``, exponentials
of ``tanh``, and loop recurrences contract.
"""
from __future__ import annotations

from typing import Any, Callable

from hypothesis import strategies as st

Draw = Callable[[Any], Any]

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


class ProgramWriter:
    """Builds one program statement by statement, keeping track of the names in scope."""

    def __init__(self, draw: Draw) -> None:
        self.draw = draw
        self.lines: list[str] = []
        self.helpers: list[str] = []
        self.scalars = ["x", "y"]
        self.arrays = ["v"]
        self.count = 0

    def pick(self, options: Any) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"{base}{self.count}"

    # -- expressions -------------------------------------------------------

    def scalar(self, depth: int) -> str:
        if depth <= 0 or self.draw(st.integers(0, 3)) == 0:
            kind = self.pick(["var", "var", "const", "reduce"])
            if kind == "var":
                return self.pick(self.scalars)
            if kind == "const":
                return self.pick(_CONSTANTS)
            return self.pick(_REDUCTIONS).format(A=self.array(0), B=self.array(0), k=self.pick("012"))
        if self.draw(st.booleans()):
            return "(" + self.pick(_SCALAR_UNARY).format(a=self.scalar(depth - 1)) + ")"
        return "(" + self.pick(_SCALAR_BINARY).format(a=self.scalar(depth - 1), b=self.scalar(depth - 1)) + ")"

    def array(self, depth: int) -> str:
        if depth <= 0 or self.draw(st.integers(0, 2)) == 0:
            return self.pick(self.arrays)
        if self.draw(st.booleans()):
            return "(" + self.pick(_ARRAY_UNARY).format(A=self.array(depth - 1)) + ")"
        return "(" + self.pick(_ARRAY_BINARY).format(A=self.array(depth - 1), B=self.array(depth - 1),
                                                    s=self.scalar(0)) + ")"

    # -- statements ----------------------------------------------------------

    def emit(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    def statement(self) -> None:
        getattr(self, "_" + self.pick([
            "assign_scalar", "assign_scalar", "assign_array", "branch", "for_loop", "while_loop",
            "array_writes", "helper_call", "tuple_helper", "swap", "list_loop", "augmented", "nested_function",
        ]))()

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
        if self.draw(st.booleans()):
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
        self.emit(f"{out}[j] {'+=' if self.draw(st.booleans()) else '='} {value}", 2)
        self.arrays.append(out)

    def _helper_call(self) -> None:
        helper = self.fresh("h")
        saved = self.scalars, self.arrays
        self.scalars, self.arrays = ["p", "q"], ["v"]
        body = self.scalar(2)
        self.scalars, self.arrays = saved
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

    def source(self) -> str:
        terms = [self.pick(self.scalars) for _ in range(3)] + [f"np.sum({self.pick(self.arrays)})"]
        body = "\n".join(self.lines + [f"    return {' + '.join(terms)} + x * y"])
        return ("import math\n\nimport numpy as np\n\nimport s2s_ad\n\n\n" + "\n\n".join(self.helpers) + "\n\n"
                + "def f(x, y, v, n):\n" + body + "\n")


def write_program(draw: Draw) -> str:
    writer = ProgramWriter(draw)
    for _ in range(draw(st.integers(1, 6))):
        writer.statement()
    return writer.source()
