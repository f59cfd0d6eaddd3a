"""Random programs that grow lists (``append``, ``+= [...]``) and let other names, tuples and dicts hold
them, in straight-line code and loops: the memory model for lists (issue 31), checked by
``test_fuzz_lists.py``.  ``make_program(seed)`` returns the source of ``f(x)``, ``x`` a vector of 6.

Each program reads its lists through every holder (``sum(b)``, ``len(a)``, ``t[0][-1]``, ``d["k"]``),
so where Python's other holder sees a list grow, a lowering that does not would give another number.
"""
from __future__ import annotations

import random

_LISTS = ("a", "b", "c")


class _Program:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lines = ["def f(x):", "    s = 0.0"]
        self.made: list[str] = []  # lists bound so far (each starts with one item: reads never fail)
        self.holders: list[tuple[str, str]] = []  # (holder name, how it reads the list: sum(...) of it)

    def item(self, depth: str) -> str:
        i = self.rng.randrange(6)
        choices = [f"x[{i}] * {self.rng.uniform(0.5, 2.0):.2f}", f"np.sin(x[{i}])", f"x[{i}] ** 2"]
        if self.made:
            choices.append(f"{self.rng.choice(self.made)}[-1] * x[{i}]")
        if depth:
            choices.append(f"x[{depth}] * x[{i}]")
        return self.rng.choice(choices)

    def statement(self, indent: str, depth: str) -> str:
        kinds = ["grow", "grow", "read", "read"]
        if len(self.made) < len(_LISTS):
            kinds.append("make")
        if self.made:
            kinds += ["hold", "hold_read"]
        kind = self.rng.choice(kinds) if self.made else "make"
        if kind == "make":
            name = _LISTS[len(self.made)]
            first = self.item(depth)
            self.made.append(name)
            return f"{indent}{name} = [{first}]"
        name = self.rng.choice(self.made)
        i = self.rng.randrange(6)
        if kind == "grow":
            if self.rng.random() < 0.7:
                return f"{indent}{name}.append({self.item(depth)})"
            return f"{indent}{name} += [{self.item(depth)}]"
        if kind == "read":
            read = self.rng.choice([f"sum({name})", f"len({name})", f"{name}[-1]", f"np.sum(np.array({name}))",
                                    f"max({name})"])
            return f"{indent}s = s + {read} * x[{i}]"
        if kind == "hold":
            holder = f"h{len(self.holders)}"
            form, reader = self.rng.choice([(name, f"sum({holder})"), (f"({name}, x[{i}])", f"sum({holder}[0])"),
                                            (f'{{"k": {name}}}', f'sum({holder}["k"])'),
                                            (f"[{name}]", f"sum({holder}[0])"), (f"list({name})", f"sum({holder})")])
            self.holders.append((holder, reader))
            return f"{indent}{holder} = {form}"
        if not self.holders:
            return f"{indent}s = s + len({name}) * x[{i}]"
        holder, reader = self.rng.choice(self.holders)
        return f"{indent}s = s + {reader} * x[{i}]"

    def block(self, indent: str, depth: str, count: int) -> None:
        for _ in range(count):
            if not depth and self.made and self.rng.random() < 0.3:
                self.lines.append(f"{indent}for i in range({self.rng.randint(1, 4)}):")
                before = len(self.lines)
                self.block(indent + "    ", "i", self.rng.randint(1, 3))
                if len(self.lines) == before:
                    self.lines.append(f"{indent}    s = s + x[i]")
            else:
                self.lines.append(self.statement(indent, depth))

    def source(self) -> str:
        self.block("    ", "", self.rng.randint(3, 8))
        tail = " + ".join(f"sum({name})" for name in self.made) or "0.0"
        self.lines.append(f"    return s + {tail}")
        return "import numpy as np\n\n\n" + "\n".join(self.lines) + "\n"


def make_program(seed: int) -> str:
    """The source of program ``seed``."""
    return _Program(seed).source()
