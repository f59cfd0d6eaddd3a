"""Random programs that share memory between names (issue 31): views of a vector ``b`` and a matrix
``M`` the function made, taken every way NumPy takes them (slices, steps, rows, columns, ``.T``,
reshapes, splits, a helper's or a lambda's result, a recursive helper's, a choice by a conditional expression
or an ``if``, a view taken in a loop by its index and carried out of it, or chosen in a loop),
carried in tuples, dicts, namedtuples, dataclasses and objects, then written through one name (the
array, or a view, or an in-place update ``b += ...`` of the array a container also holds, or of the
dict's item or object's attribute holding it, ``held['k'] *= ...``) in straight code, loops and
branches, and read through another; ``b`` starts as a value of ``x`` or as a constant array
(``np.ones(6)``), which a loop then updates in place.  ``make_program(seed)`` returns the source of ``f(x)``, ``x`` of
six numbers; NumPy's own run of it is the oracle for the value, differences for the gradient."""
from __future__ import annotations

import random
import re

HEADER = '''import numpy as np
from collections import namedtuple
from dataclasses import dataclass

Pair = namedtuple("Pair", "a b")


@dataclass
class Held:
    v: object


class Box:
    def __init__(self, v):
        self.v = v


def middle(v):
    return v[1:3]


def halves(v):
    return v[:3], v[3:]


def rows_of(m):
    return [m[0], m[1]]


def tail(v, k):
    if k == 0:
        return v
    return tail(v[1:], k - 1)


'''

# views of b (six numbers) and of M (2 x 3): (expression, whether a write through it reaches b or M)
VECTOR_VIEWS = ["b[1:4]", "b[::2]", "b[2:]", "b[:-1][1:]", "b.reshape(2, 3)", "b.reshape(2, 3)[1]",
                "np.split(b, 2)[0]", "np.array_split(b, [2])[1]", "middle(b)", "halves(b)[1]",
                "(lambda v: v[:2])(b)", "b.reshape(3, 2).T"]
MATRIX_VIEWS = ["M[0]", "M[1]", "M[:, 1]", "M.T", "M[:, 1:]", "M.T[2]", "rows_of(M)[1]", "M.reshape(6)",
                "M[1:, ::2]"]
# views taken in a loop over t in range(3), by t: carried out of the loop (the last iteration's)
LOOP_VIEWS = ["b[t:t + 2]", "b[t::2]", "b[t + 1:]", "M[:, t]", "M[:, t:]", "tail(b, t)", "b.reshape(2, 3)[:, t]",
              "b[t:t + 3].reshape(3, 1)", "M.T[t]"]
CONTAINERS = ["({v}, b)[0]", '{{"k": {v}}}["k"]', "Pair({v}, M).a", "Held({v}).v", "Box({v}).v"]
VALUES = ["x[{i}] * x[{j}]", "np.sin(x[{i}])", "x[{i}] ** 2", "2.0 * x[{i}] - x[{j}]", "np.exp(0.3 * x[{i}])"]


def _value(rng: random.Random) -> str:
    return rng.choice(VALUES).format(i=rng.randrange(6), j=rng.randrange(6))


def _write(rng: random.Random, views: list[str], through: str = "") -> str:
    """One write: into b or M by index, through a view's name, an in-place update of b or M, or one of
    the dict's item or object's attribute ``through`` that holds b (``held['k'] += ...``); or b bound to
    a new array, after which an in-place update of b changes what only some paths' b is."""
    kind = rng.randrange(9)
    if kind == 7 and through:
        return f"{through} {rng.choice(['+=', '-=', '*='])} {_value(rng)} * x"
    if kind >= 7:  # b bound to a new array (on one path, or one iteration): what holds or views it keeps the old
        return f"b = b * {_value(rng)}"
    if kind == 5:
        return f"b {rng.choice(['+=', '-=', '*='])} {_value(rng)} * x"
    if kind == 6:
        return f"M {rng.choice(['+=', '*='])} {_value(rng)}"
    if kind == 0:
        return f"b[{rng.randrange(6)}] = {_value(rng)}"
    if kind == 1:
        start = rng.randrange(5)
        return f"b[{start}:{start + 2}] = b[{start}:{start + 2}] * {_value(rng)}"
    if kind == 2:
        return f"M[{rng.randrange(2)}, {rng.randrange(3)}] = {_value(rng)}"
    if kind == 3:
        return f"M[:, {rng.randrange(3)}] = M[:, {rng.randrange(3)}] + {_value(rng)}"
    if not views:  # (every view was a choice, which is not written through)
        return f"b[{rng.randrange(6)}] = {_value(rng)}"
    return f"{rng.choice(views)}[0] = {_value(rng)}"


def make_program(seed: int) -> str:
    rng = random.Random(seed)
    # b starts as a value of x (maybe a number until the kinds are known) or as an array made constant
    # (an array for certain: its in-place updates are stores from the first lowering on)
    start = rng.choice(['x * 1.0', 'np.sin(x)', 'x + 0.5', 'x ** 2', 'np.ones(6)', 'np.full(6, 0.5)'])
    lines = ["def f(x):", f"    b = {start}", "    M = np.outer(x[:2], x[2:5]) * 1.0"]
    views, read = [], []
    through = ""
    if rng.random() < 0.3:  # the array itself held by another name
        holder = rng.choice(["held = {'k': b}", "held = [b, M]", "held = Pair(b, M)", "held = Box(b)", "held = b"])
        lines.append(f"    {holder}")
        read.append({"{": "held['k']", "[": "held[0]", "P": "held.a", "B": "held.v"}.get(holder[7], "held"))
        through = {"{": "held['k']", "B": "held.v"}.get(holder[7], "")  # updated in place through the holder
    for k in range(rng.randint(2, 4)):
        source = rng.choice(VECTOR_VIEWS + MATRIX_VIEWS)
        name = f"v{k}"
        choice = rng.random()
        if choice < 0.15:  # chosen by a conditional expression
            other = rng.choice(VECTOR_VIEWS) if source in VECTOR_VIEWS else rng.choice(MATRIX_VIEWS)
            lines.append(f"    {name} = {source} if x[{rng.randrange(6)}] > 0 else {other}")
            read.append(name)
            continue
        if choice < 0.35:  # taken in a loop by its index, read after the loop (or chosen in it by a test)
            taken = rng.choice(LOOP_VIEWS)
            if choice < 0.27:
                lines += ["    for t in range(3):", f"        {name} = {taken}"]
            else:
                first = re.sub(r"\bt\b", "0", taken)  # (the view before the loop: t = 0's)
                lines += [f"    {name} = {first}", "    for t in range(3):",
                          f"        if x[t] > {rng.choice(['0', '0.5', '-0.5'])}:", f"            {name} = {taken}"]
            read.append(name)
            continue
        if choice < 0.5:  # chosen by an if statement, of the same shape on both paths
            lines += [f"    if x[{rng.randrange(6)}] > 0:", f"        {name} = {source}", "    else:",
                      f"        {name} = {source} * 1.0"]
            read.append(name)
            continue
        lines.append(f"    {name} = {source}")
        views.append(name)
        if rng.random() < 0.4:
            held = f"h{k}"
            lines.append(f"    {held} = {rng.choice(CONTAINERS).format(v=name)}")
            read.append(held)
        else:
            read.append(name)
    if rng.random() < 0.3:  # unpacked from a tuple bound first
        lines += ["    parts = (b[:2], M[1])", "    p0, p1 = parts"]
        read += ["p0", "p1"]
    for _ in range(rng.randint(1, 3)):
        write = _write(rng, views, through)
        shape = rng.randrange(3)
        if shape == 0:
            lines.append(f"    {write}")
        elif shape == 1:
            lines += ["    for t in range(2):", f"        {write.replace('x[0]', 'x[t]')}"]
        else:
            lines += ["    if x[0] > 0:", f"        {write}", "    else:", f"        {_write(rng, views, through)}"]
    terms = [f"np.sum({name} * {name})" if rng.random() < 0.5 else f"np.sum({name}) * x[{rng.randrange(6)}]"
             for name in read]
    terms.append("np.sum(b * b)" if rng.random() < 0.5 else "np.sum(M) * x[1]")
    lines.append("    return " + " + ".join(terms))
    return HEADER + "\n".join(lines) + "\n"
