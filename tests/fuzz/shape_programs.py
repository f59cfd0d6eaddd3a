"""Random programs whose arguments' axis lengths follow a pattern, for test_fuzz_shapes.py.

The generated code is specialised on the pattern of the arguments' lengths
(``kinds.py``: ``array2:a,b``), and the analysis carries those dims through
broadcasting, reductions, products, indexing, ``np.zeros`` of lengths, loops,
branches and helpers; the reverse sweep then sums a broadcast contribution
over the axes the dims prove.  A wrong dims fact is a wrong gradient, so the
programs here are made of exactly those operations, over 2-4 arguments whose
shapes are drawn from broadcast-compatible patterns with lengths in
{1, 2, 3, 4} (lengths of 1, lengths that coincide, rank differences, 0-d
arrays and Python floats).

``make_program(seed)`` returns a ``ShapeProgram``: the module source (``f`` and
the helper it calls) and the shape sets to call the same gradient function
with: the shapes the program was generated for, the same pattern with other
lengths, and other patterns (which the program may not run on: the test skips
those).  Each statement is drawn, then run on values of the first shape set:
one that raises is drawn again, so the program runs there.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

ARGUMENT_NAMES = ("x", "y", "z", "w")
_SYMBOLS = ("a", "b", "c")
_MAX_RANK = 4
_MAX_SIZE = 256

# A helper's body, by the rank of what it is given (None: any rank); ``u`` is its argument.
_HELPERS: tuple[tuple[Optional[int], str], ...] = (
    (None, "    return np.sin(u) * u + 0.5"),
    (None, "    s = np.tanh(u)\n    return s * s - u"),
    (1, "    return u - np.mean(u, axis=-1, keepdims=True)"),
    (1, "    return u[..., ::-1] * u"),
    (1, "    out = u * 1.0\n    out += np.max(u, axis=-1, keepdims=True)\n    return out"),
    (2, "    return u.T @ u"),
    (2, "    return np.sum(u, axis=0) * u[0]"),
)


@dataclass
class ShapeProgram:
    """A generated module and the argument shape sets to differentiate it at."""

    seed: int
    source: str
    arguments: list  # per argument: a shape tuple, or "float" for a Python float
    shape_sets: list  # lists of shapes, the first the one the program was generated for
    uses_writes: bool = False  # subscript writes (out[i] = ...): JAX cannot run it
    uses_std: bool = False
    notes: list = field(default_factory=list)


def values_for(shapes: list, rng: np.random.Generator) -> list:
    """Argument values of these shapes ("float": a Python float): no zeros, no ties."""
    values = []
    for shape in shapes:
        if shape == "float":
            values.append(float(rng.uniform(0.3, 0.9) * rng.choice([-1.0, 1.0])))
        else:
            size = int(np.prod(shape)) if shape else 1
            values.append((rng.uniform(0.3, 0.9, size) * rng.choice([-1.0, 1.0], size)).reshape(shape))
    return values


# -- argument shapes -----------------------------------------------------------------


def _argument_symbols(rnd: random.Random, count: int) -> list:
    """Per argument: "float", or a tuple of symbols / 1s (a broadcast-compatible pattern)."""
    full_rank = rnd.choice((1, 2, 2, 3))
    full = tuple(rnd.sample(_SYMBOLS, full_rank))
    patterns = []
    for _ in range(count):
        pick = rnd.random()
        if pick < 0.1:
            patterns.append("float")
        elif pick < 0.17:
            patterns.append(())  # a 0-d array
        elif pick < 0.3:  # a matrix to multiply by: its first axis the full shape's last
            other = [s for s in _SYMBOLS if s != full[-1]]
            patterns.append((full[-1], rnd.choice(other + [full[-1]])))
        else:
            rank = rnd.randint(1, full_rank)
            suffix = list(full[full_rank - rank:])
            for i in range(rank):
                if rnd.random() < 0.2:
                    suffix[i] = 1
            patterns.append(tuple(suffix))
    return patterns


def _concrete(patterns: list, lengths: dict) -> list:
    return [p if p == "float" else tuple(1 if s == 1 else lengths[s] for s in p) for p in patterns]


def _same_pattern(shapes: list, rnd: random.Random) -> list:
    """The same pattern of equal lengths and 1s, with other lengths (each class a new length)."""
    classes = sorted({n for s in shapes if s != "float" for n in s if n != 1})
    new = rnd.sample((2, 3, 4, 5), len(classes))
    mapping = dict(zip(classes, new))
    return [s if s == "float" else tuple(1 if n == 1 else mapping[n] for n in s) for s in shapes]


def _shape_sets(rnd: random.Random, patterns: list) -> list:
    first = _concrete(patterns, {s: rnd.choice((1, 2, 3, 3, 4)) for s in _SYMBOLS})
    sets = [first, _same_pattern(first, rnd)]
    for _ in range(2):  # other patterns: lengths redrawn (some collapse to 1 or coincide)
        sets.append(_concrete(patterns, {s: rnd.choice((1, 2, 3, 4)) for s in _SYMBOLS}))
    if rnd.random() < 0.5:  # one argument's axis set to 1 (a broadcast the first call did not have)
        changed = list(first)
        i = rnd.randrange(len(changed))
        if changed[i] != "float" and changed[i]:
            axis = rnd.randrange(len(changed[i]))
            changed[i] = changed[i][:axis] + (1,) + changed[i][axis + 1:]
            sets.append(changed)
    unique = []
    for s in sets:
        if s not in unique:
            unique.append(s)
    return unique[:4]


# -- statements ------------------------------------------------------------------------


class _Builder:
    """Draws statements, each checked by running it on the first shape set's values."""

    def __init__(self, rnd: random.Random, arguments: list, shapes: list, helper: tuple) -> None:
        self.rnd = rnd
        self.lines: list[str] = []
        self.helper_rank, helper_body = helper
        self.helper_source = "def helper(u):\n" + helper_body + "\n"
        self.globals: dict = {"np": np}
        exec(self.helper_source, self.globals)
        values = values_for(shapes, np.random.default_rng(rnd.randrange(1 << 30)))
        self.env: dict = dict(zip(arguments, values))
        self.soft: set = set()  # values whose shape differs by branch: used elementwise only
        self.counter = 0
        self.uses_writes = False
        self.uses_std = False

    # -- picking values ------------------------------------------------------------

    def names(self, min_rank: int = 0, max_rank: int = _MAX_RANK, strict: bool = True) -> list:
        return [n for n, v in self.env.items() if (n in ARGUMENT_NAMES or re.fullmatch(r"t\d+", n))
                and min_rank <= np.ndim(v) <= max_rank and not (strict and n in self.soft)]

    def pick(self, min_rank: int = 0, max_rank: int = _MAX_RANK, strict: bool = True) -> Optional[str]:
        names = self.names(min_rank, max_rank, strict)
        if not names:
            return None
        recent = names[-4:]
        return self.rnd.choice(recent if self.rnd.random() < 0.6 else names)

    def fresh(self) -> str:
        self.counter += 1
        return f"t{self.counter}"

    # -- trying a statement ------------------------------------------------------------

    def attempt(self, lines: list, soft: tuple = ()) -> bool:
        """Run ``lines`` on the current values; keep them where they run and stay small and finite."""
        env = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.env.items()}
        try:
            with np.errstate(all="raise"):
                exec("\n".join(lines), dict(self.globals), env)
        except Exception:
            return False
        for name, value in env.items():
            if name in self.env and name in ARGUMENT_NAMES:
                continue
            if isinstance(value, (int, float, np.ndarray, np.floating)) and not isinstance(value, bool):
                if np.ndim(value) > _MAX_RANK or np.size(value) > _MAX_SIZE or np.size(value) == 0:
                    return False
                if not np.all(np.isfinite(value)) or np.max(np.abs(value), initial=0.0) > 1e3:
                    return False
        for name, value in env.items():
            if name not in self.env:
                self.env[name] = value
            elif name not in ARGUMENT_NAMES:
                self.env[name] = value
        self.soft.update(soft)
        self.lines.extend(lines)
        return True

    # -- the statement kinds -------------------------------------------------------

    def elementwise(self) -> list:
        a, b = self.pick(strict=False), self.pick(strict=False)
        t = self.fresh()
        form = self.rnd.choice((
            "{a} * {b}", "{a} + {b}", "{a} - {b}", "{a} / (1.5 + {b} * {b})", "np.sin({a}) * {b}",
            "np.tanh({a}) + np.cos({b})", "np.maximum({a}, {b})", "np.minimum({a}, {b} * 0.5)",
            "np.where({a} > {b}, {a}, {b} * 0.5)", "np.exp(np.tanh({a})) * {b}", "{a} ** 2 + {b}",
            "np.square({a}) - np.abs({b})", "np.hypot({a}, {b})", "np.multiply({a}, {b})",
            "np.add({a}, np.sin({b}))"))
        return [f"{t} = " + form.format(a=a, b=b)]

    def index(self) -> list:
        a = self.pick(min_rank=1)
        if a is None:
            return []
        b = self.pick(strict=False)
        t = self.fresh()
        form = self.rnd.choice((
            "{a}[:, None]", "{a}[None]", "{a}[..., 0]", "{a}[1:]", "{a}[0]", "{a}[-1]", "{a}[..., None] * {b}",
            "{a}[:, None] * {b}", "{a}[None, :] + {b}", "{a}[::-1] * {b}", "{a}[:-1] + {a}[1:]",
            "{a}[..., 1:] * {b}", "{a}[:, 0]", "{a}[0, ...] + {b}", "{a}[..., -1, None] * {b}"))
        return [f"{t} = " + form.format(a=a, b=b)]

    def reduction(self) -> list:
        a = self.pick(min_rank=1)
        if a is None:
            return []
        rank = np.ndim(self.env[a])
        t = self.fresh()
        fn = self.rnd.choice(("sum", "sum", "mean", "max", "min", "prod", "std"))
        if fn == "std":
            self.uses_std = True
        choice = self.rnd.random()
        if choice < 0.15:
            axis = "None"
        elif choice < 0.35 and rank >= 2:
            axes = self.rnd.sample(range(-rank, rank), 2)
            axis = f"({axes[0]}, {axes[1]})"
        else:
            axis = str(self.rnd.randrange(-rank, rank))
        keep = self.rnd.choice(("", ", keepdims=True", ", keepdims=False"))
        if self.rnd.random() < 0.3 and fn != "std":
            return [f"{t} = {a}.{fn}(axis={axis}{keep})"]
        arg = f"{a} + 0.5" if fn == "std" else a
        return [f"{t} = np.{fn}({arg}, axis={axis}{keep})"]

    def reduce_and_broadcast(self) -> list:
        """A reduction put back against its operand (centring, softmax, normalising)."""
        a = self.pick(min_rank=1)
        if a is None:
            return []
        rank = np.ndim(self.env[a])
        axis = self.rnd.randrange(-rank, rank)
        t = self.fresh()
        form = self.rnd.choice((
            "{a} - np.mean({a}, axis={ax}, keepdims=True)",
            "np.exp({a} - np.max({a}, axis={ax}, keepdims=True)) / np.sum(np.exp({a}), axis={ax}, keepdims=True)",
            "{a} / (1.0 + np.sum({a} * {a}, axis={ax}, keepdims=True))",
            "{a} * np.expand_dims(np.sum({a}, axis={ax}), {ax})"))
        return [f"{t} = " + form.format(a=a, ax=axis)]

    def matmul(self) -> list:
        candidates = self.names(min_rank=1)
        pairs = [(p, q) for p in candidates for q in candidates if self._multiplies(p, q)]
        t = self.fresh()
        if pairs:
            p, q = self.rnd.choice(pairs)
            form = self.rnd.choice(("{p} @ {q}", "np.matmul({p}, {q})", "np.tanh({p}) @ {q}"))
            return [f"{t} = " + form.format(p=p, q=q)]
        two = self.names(min_rank=2, max_rank=2)
        if two:
            p = self.rnd.choice(two)
            return [f"{t} = {p}.T @ {p}" if self.rnd.random() < 0.5 else f"{t} = {p} @ {p}.T"]
        return []

    def _multiplies(self, p: str, q: str) -> bool:
        try:
            np.matmul(self.env[p], self.env[q])
            return True
        except ValueError:
            return False

    def transpose(self) -> list:
        a = self.pick(min_rank=2, max_rank=2)
        if a is None:
            return []
        b = self.pick(strict=False)
        t = self.fresh()
        form = self.rnd.choice(("{a}.T", "{a}.T * {b}", "np.transpose({a}) + {b}", "np.sin({a}.T)"))
        return [f"{t} = " + form.format(a=a, b=b)]

    def zeros_fill(self) -> list:
        a = self.pick(min_rank=1, max_rank=2)
        if a is None:
            return []
        self.uses_writes = True
        t = self.fresh()
        b = self.pick(strict=False)
        if np.ndim(self.env[a]) == 2:
            form = self.rnd.choice((
                ["n, k = {a}.shape", "{t} = np.zeros((n, k))", "for i in range(n):",
                 "    {t}[i] = np.sin({a}[i]) * {b}"],
                ["n, k = {a}.shape", "{t} = np.zeros((k, n))", "for i in range(n):", "    for j in range(k):",
                 "        {t}[j, i] = {a}[i, j] * {a}[i, 0]"],
                ["n = {a}.shape[0]", "{t} = np.zeros((n, 1))", "for i in range(n):",
                 "    {t}[i, 0] = np.sum({a}[i] ** 2)"],
                ["{t} = np.zeros({a}.shape)", "for i in range(len({a})):", "    {t}[i, :] = {a}[i] * {b}"],
            ))
        else:
            c = self.pick(min_rank=1, max_rank=1) or a
            form = self.rnd.choice((
                ["{t} = np.zeros(len({a}))", "for i in range(len({a})):", "    {t}[i] = {a}[i] ** 2 + {a}[0]"],
                ["{t} = np.zeros((len({a}), len({c})))", "for i in range(len({a})):",
                 "    {t}[i] = {a}[i] * {c}"],
                ["{t} = np.zeros((len({c}), len({a})))", "for i in range(len({a})):",
                 "    {t}[:, i] = np.cos({c}) * {a}[i]"],
                ["n = {a}.shape[0]", "{t} = np.zeros(n)", "for i in range(n):", "    {t}[i] = np.sum({a}[i] * {b})"],
            ))
            form = [line.replace("{c}", c) for line in form]
        return [line.format(a=a, b=b, t=t) for line in form]

    def loop_carry(self) -> list:
        """A value that starts a number and becomes an array in the loop."""
        a = self.pick(min_rank=1)
        b = self.pick(strict=False)
        t = self.fresh()
        if a is not None and self.rnd.random() < 0.6:
            form = self.rnd.choice((
                ["{t} = 0.0", "for i in range(len({a})):", "    {t} = {t} * 0.5 + {a}[i] * {b}"],
                ["{t} = 1.0", "for row in {a}:", "    {t} = np.tanh({t} + row * {b})"],
                ["{t} = 0.0", "for i in range({a}.shape[0]):", "    {t} += np.sin({a}[i])"],
            ))
        else:
            form = self.rnd.choice((
                ["{t} = 0.0", "for i in range(3):", "    {t} = {t} * 0.5 + np.sin({b})"],
                ["{t} = 0.0", "for i in range(2):", "    if i == 0:", "        {t} = {t} + 1.0",
                 "    else:", "        {t} = {t} * {b}"],
            ))
            a = a or b
        return [line.format(a=a, b=b, t=t) for line in form]

    def branch(self) -> list:
        """Each side a different shape (the else side broadcasts into the then side's)."""
        a = self.pick(min_rank=1)
        c = self.pick(strict=False)
        if a is None:
            return []
        rank = np.ndim(self.env[a])
        t = self.fresh()
        other = self.rnd.choice((
            "np.sum({a})", "np.mean({a}, axis={ax}, keepdims=True)", "{a}[..., :1] * 2.0", "0.5",
            "np.max({a}, axis={ax}, keepdims=True) * {c}"))
        condition = self.rnd.choice((
            "np.sum({a}) > 0.0", "{a}.shape[0] > 2", "len({a}) == 3", "np.ndim({c}) == 2", "{a}.shape[-1] == 1"))
        then = self.rnd.choice(("np.sin({a}) * {c}", "{a} * 2.0", "{a} + {c}"))
        form = [f"if {condition}:", f"    {{t}} = {then}", "else:", f"    {{t}} = {other}"]
        if self.rnd.random() < 0.5:  # the other way round
            form = [f"if {condition}:", f"    {{t}} = {other}", "else:", f"    {{t}} = {then}"]
        lines = [line.format(a=a, c=c, t=t, ax=self.rnd.randrange(-rank, rank)) for line in form]
        if not self.attempt(lines, soft=(t,)):
            return []
        return None  # already taken

    def helper_call(self) -> list:
        rank = self.helper_rank
        a = self.pick(min_rank=rank or 0, max_rank=2 if rank == 2 else _MAX_RANK)
        if a is None:
            return []
        t = self.fresh()
        if self.rnd.random() < 0.5:
            return [f"{t} = helper({a})"]
        b = self.pick(strict=False)
        return [f"{t} = helper({a}) * {b}"]

    def in_place(self) -> list:
        a = self.pick(min_rank=1)
        if a is None:
            return []
        b = self.pick(strict=False)
        t = self.fresh()
        op = self.rnd.choice(("+=", "-=", "*="))
        start = self.rnd.choice(("{a} * 1.0", "{a}.copy()", "np.sin({a})"))
        rhs = self.rnd.choice(("{b}", "np.tanh({b})", "{b} * 0.5"))
        return [f"{t} = " + start.format(a=a), f"{t} {op} " + rhs.format(b=b)]

    def shape_loop(self) -> list:
        """A loop whose carried array changes shape from trip to trip (its facts must widen)."""
        a = self.pick(min_rank=1)
        if a is None:
            return []
        b = self.pick(strict=False)
        m = self.pick(min_rank=2, max_rank=2) or a
        t = self.fresh()
        step = self.rnd.choice((
            "{t}[1:] * 2.0", "np.sum({t}, axis=0, keepdims=True) * 0.5", "np.tanh({t}[:, None] * {b})",
            "np.tanh({t} @ {m})", "helper({t})", "{t}[1:] + 0.5 * {t}[:-1]", "np.tanh({t}.T) * {b}",
            "np.mean({t}, axis=-1) + 0.5"))
        trips = self.rnd.choice(("range(2)", "range(len({a}) - 1)", "range(1, 3)"))
        if self.rnd.random() < 0.3:
            form = ["{t} = {a}", "while np.ndim({t}) > 0 and {t}.shape[0] > 1:", "    {t} = {t}[1:] + 0.5 * {t}[:-1]"]
        else:
            form = ["{t} = {a}", f"for i in {trips}:", f"    {{t}} = {step}"]
        return [line.format(a=a, b=b, m=m, t=t) for line in form]

    def lengths(self) -> list:
        """Arrays made from lengths and slices by lengths (``np.zeros(n - 1)``, ``x[:len(y)]``, ``np.eye(n)``)."""
        a, c = self.pick(min_rank=1), self.pick(min_rank=1)
        if a is None:
            return []
        b = self.pick(strict=False)
        t = self.fresh()
        form = self.rnd.choice((
            ["{t} = {a}[:len({c})] * {b}"],
            ["n = len({a})", "{t} = np.zeros(n - 1)", "for i in range(n - 1):", "    {t}[i] = {a}[i] * {a}[i + 1]"],
            ["{t} = np.eye(len({a})) * {a} + {b}"],
            ["{t} = np.ones_like({a}) * np.sum({c})"],
            ["{t} = np.zeros_like({a})", "{t} += {a} * {b}"],
            ["n = {a}.shape[-1]", "{t} = np.full((n, 1), 0.5) * {b}"],
            ["{t} = np.expand_dims({a}, 0) * {b}"],
            ["{t} = np.concatenate([{a}, {a}[:1]]) * 0.5"],
            ["{t} = np.outer({a}, {c}) + {b}"],
            ["{t} = np.broadcast_to({a}, (2,) + {a}.shape) * {b}"],
            ["{t} = np.reshape({a}, (-1,)) * 0.5"],
            ["{t} = np.squeeze({a}[None]) * {b}"],
        ))
        if any("zeros(n - 1)" in line for line in form):
            self.uses_writes = True
        return [line.format(a=a, b=b, c=c or a, t=t) for line in form]

    def helper_twice(self) -> list:
        """The helper called with two arguments of other shapes (its result found for each)."""
        rank = self.helper_rank
        a, c = self.pick(min_rank=rank or 0), self.pick(min_rank=rank or 0)
        if a is None or c is None:
            return []
        t = self.fresh()
        return [f"{t} = np.sum(helper({a})) * helper({c})"]

    def statement(self) -> None:
        kinds: list[tuple[Callable, float]] = [
            (self.elementwise, 3), (self.index, 2), (self.reduction, 2), (self.reduce_and_broadcast, 1),
            (self.matmul, 1.5), (self.transpose, 1), (self.zeros_fill, 1), (self.loop_carry, 1),
            (self.branch, 1), (self.helper_call, 1), (self.in_place, 1), (self.shape_loop, 1.5),
            (self.lengths, 1.5), (self.helper_twice, 0.5)]
        for _ in range(12):
            make = self.rnd.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
            counter = self.counter
            lines = make()
            if lines is None:
                return
            if lines and self.attempt(lines):
                return
            self.counter = counter

    def result(self) -> str:
        """A number from the last few values (and sometimes an argument)."""
        names = [n for n in self.names(strict=False) if n not in ARGUMENT_NAMES][-3:]
        if not names or self.rnd.random() < 0.3:
            names = names + [self.rnd.choice([n for n in self.env if n in ARGUMENT_NAMES])]
        terms = []
        for n in names:
            terms.append(self.rnd.choice(("np.sum(np.tanh({n}))", "np.sum({n} * {n}) * 0.5", "np.mean(np.sin({n}))",
                                          "np.sum({n})")).format(n=n))
        return " + ".join(terms)


def make_program(seed: int) -> ShapeProgram:
    """The program and shape sets of this seed (the same on every run)."""
    rnd = random.Random(seed)
    count = rnd.randint(2, 4)
    arguments = list(ARGUMENT_NAMES[:count])
    patterns = _argument_symbols(rnd, count)
    sets = _shape_sets(rnd, patterns)
    helper = rnd.choice(_HELPERS)
    builder = _Builder(rnd, arguments, sets[0], helper)
    for _ in range(rnd.randint(2, 7)):
        builder.statement()
    body = "\n".join("    " + line for line in builder.lines)
    source = ("import numpy as np\n\n\n" + builder.helper_source + "\n\n"
              f"def f({', '.join(arguments)}):\n" + (body + "\n" if body else "")
              + f"    return {builder.result()}\n")
    return ShapeProgram(seed, source, patterns, sets, builder.uses_writes, builder.uses_std)
