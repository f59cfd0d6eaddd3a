"""Vector forward mode with containers (issue 34): ``jvp(f, primals, tangents, batched=True)`` where ``f`` takes
or returns dicts, lists, tuples, namedtuples or dataclasses of arrays and numbers: each leaf of a tangent
carries the leading axis of directions, and so does each leaf of the result's tangent.

Oracles: one ``jvp`` per direction, central differences, and ``jax.vmap`` of ``jax.jvp``.  Each batched case
asserts that one sweep of the tangent code took every direction (its vector version or ``batched_sweep``
answered), so that the fallback (one sweep per direction, also tested) cannot pass for it."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import forward_mode
from s2s_ad.targets.target import NUMPY


class Pair(NamedTuple):
    w: np.ndarray
    b: float


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    scale: float


def dict_in(p, y):
    return np.tanh(p["w"] * y) + p["b"] * np.sum(y) * p["w"][0]


def dict_out(x, y):
    return {"a": np.sin(x) * y[0], "b": np.sum(x * x) * y}


def nested(p, y):
    s = 0.0
    for k in range(2):
        if np.sum(p["layers"][k]) > 0:
            s = s + np.sum(np.sin(p["layers"][k]) * y)
        else:
            s = s + np.sum(p["layers"][k] ** 2) * p["gain"]
    return (s * y, [p["gain"] * y[0], np.cos(p["layers"][0])])


def tuple_in_and_out(pair, t):
    w, b = pair
    out = np.zeros(3)
    for i in range(3):
        out[i] = w[i] * b + t[0][i] ** 2
    return out * t[1], b * np.sum(w)


def named(p, y):
    return np.exp(0.1 * p.w) * p.b + y


def of_a_dataclass(layer, y):
    return {"out": np.tanh(layer.w @ y) * layer.scale, "norm": np.sum(layer.w * layer.w)}


def with_an_integer_leaf(p, y):
    return {"v": p["w"] * p["n"] + y, "n": p["n"] * 2}


def no_batched_form(p, y):  # a running sum by np.convolve, which has no batched form: one sweep per direction
    return {"c": np.convolve(p["w"] * y, np.ones(4))[:4]}


RNG = np.random.default_rng(3401)
V3, V4 = RNG.normal(size=3), RNG.normal(size=4)
M = RNG.normal(size=(2, 3))
CASES = [
    (dict_in, ({"w": V3, "b": 0.7}, V3[::-1].copy())),
    (dict_out, (V4, V3)),
    (nested, ({"layers": [V3, -np.abs(V3)], "gain": 1.3}, V3 * 0.5)),
    (tuple_in_and_out, ((V3, 0.4), [V3 * 2.0, V3 + 1.0])),
    (named, (Pair(V3, 0.8), V3)),
    (of_a_dataclass, (Layer(M, 0.6), V3)),
    (with_an_integer_leaf, ({"w": V3, "n": 3}, V3)),
]


def _random_directions(value, count):
    """A tangent of ``value``'s structure, each leaf ``count`` random directions (zeros for an integer)."""
    if isinstance(value, dict):
        return {k: _random_directions(v, count) for k, v in value.items()}
    if isinstance(value, Pair):
        return Pair(*(_random_directions(v, count) for v in value))
    if isinstance(value, Layer):
        return Layer(_random_directions(value.w, count), _random_directions(value.scale, count))
    if isinstance(value, (tuple, list)):
        return type(value)(_random_directions(v, count) for v in value)
    if isinstance(value, (int, np.integer)):
        return np.zeros((count,) + np.shape(value))
    return RNG.normal(size=(count,) + np.shape(value))


def _map(fn, *values):
    """``fn`` leaf by leaf over values of one structure."""
    first = values[0]
    if isinstance(first, dict):
        return {k: _map(fn, *(v[k] for v in values)) for k in first}
    if isinstance(first, Pair):
        return Pair(*(_map(fn, *parts) for parts in zip(*values)))
    if isinstance(first, Layer):
        return Layer(_map(fn, *(v.w for v in values)), _map(fn, *(v.scale for v in values)))
    if isinstance(first, (tuple, list)):
        return type(first)(_map(fn, *parts) for parts in zip(*values))
    return fn(*values)


def _leaves(value):
    out = []
    _map(out.append, value)
    return out


def _direction(tangent, d):
    return _map(lambda t: t[d], tangent)


def _central(fn, args, tangents, eps=1e-6):
    def at(s):
        shifted = tuple(_map(lambda a, t: a if isinstance(a, (int, np.integer)) else a + s * t, a, t)
                        for a, t in zip(args, tangents))
        return _map(lambda v: np.asarray(v, dtype=float), fn(*shifted))
    return _map(lambda p, m: (p - m) / (2 * eps), at(eps), at(-eps))


def _spy(monkeypatch):
    """Whether each sweep asked answered: the tangent code's vector version (``Target.vector_sweep``) or,
    where it has none, the tangent code with its tangents wrapped (``batched_sweep``); a pair of asks for
    one sweep counts as one."""
    swept: list[bool] = []
    wrapped, vector = forward_mode.batched_sweep, type(NUMPY).vector_sweep

    def wrapped_spy(*args):
        result = wrapped(*args)
        swept[-1] = result is not None
        return result

    def vector_spy(*args):
        result = vector(*args)
        swept.append(result is not None)
        return result
    monkeypatch.setattr(forward_mode, "batched_sweep", wrapped_spy)
    monkeypatch.setattr(type(NUMPY), "vector_sweep", vector_spy)
    return swept


@pytest.mark.parametrize("fn, args", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_batched_jvp_of_containers_equals_one_jvp_per_direction_and_differences(fn, args, monkeypatch):
    swept = _spy(monkeypatch)
    count = 4
    tangents = tuple(_random_directions(a, count) for a in args)
    value, batched = s2s_ad.jvp(fn, args, tangents, batched=True)
    assert swept == [True]  # one sweep took the four directions
    for v, w in zip(_leaves(value), _leaves(fn(*args))):
        np.testing.assert_allclose(v, w, rtol=1e-13)
    for d in range(count):
        one = tuple(_direction(t, d) for t in tangents)
        separate = s2s_ad.jvp(fn, args, one)[1]
        got = _leaves(_direction(batched, d))
        assert len(got) == len(_leaves(separate))
        for g, w, c in zip(got, _leaves(separate), _leaves(_central(fn, args, one))):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-6)
    # the result keeps its structure: a dict stays a dict, a tuple a tuple
    assert type(batched) is type(value)


def test_a_container_with_an_operation_without_a_batched_form_runs_one_jvp_per_direction(monkeypatch):
    swept = _spy(monkeypatch)
    args = ({"w": V4}, V4[::-1].copy())
    tangents = ({"w": RNG.normal(size=(3, 4))}, RNG.normal(size=(3, 4)))
    _, batched = s2s_ad.jvp(no_batched_form, args, tangents, batched=True)
    assert swept == [False]  # refused, not guessed
    for d in range(3):
        want = np.cumsum(tangents[0]["w"][d] * args[1] + args[0]["w"] * tangents[1][d])
        np.testing.assert_allclose(batched["c"][d], want, rtol=1e-13)


def test_container_tangents_must_have_the_structure_and_the_direction_axis():
    args = ({"w": V3, "b": 0.7}, V3)
    with pytest.raises(ValueError, match="structure"):
        s2s_ad.jvp(dict_in, args, ({"w": np.ones((2, 3))}, np.ones((2, 3))), batched=True)
    with pytest.raises(ValueError, match=r"must be shaped \(directions,\) \+ \(\)"):
        s2s_ad.jvp(dict_in, args, ({"w": np.ones((2, 3)), "b": 1.0}, np.ones((2, 3))), batched=True)
    with pytest.raises(ValueError, match="one number of directions"):
        s2s_ad.jvp(dict_in, args, ({"w": np.ones((2, 3)), "b": np.ones(3)}, np.ones((2, 3))), batched=True)


def test_batched_jvp_of_containers_equals_jax_vmap_of_its_jvp():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def dict_in_j(p, y):
        return jnp.tanh(p["w"] * y) + p["b"] * jnp.sum(y) * p["w"][0]

    def dict_out_j(x, y):
        return {"a": jnp.sin(x) * y[0], "b": jnp.sum(x * x) * y}

    for fn, twin, args in [(dict_in, dict_in_j, CASES[0][1]), (dict_out, dict_out_j, CASES[1][1])]:
        tangents = tuple(_random_directions(a, 5) for a in args)
        _, ours = s2s_ad.jvp(fn, args, tangents, batched=True)
        as_jax = jax.tree_util.tree_map(jnp.asarray, args)
        theirs = jax.vmap(lambda *t: jax.jvp(twin, as_jax, t)[1])(*jax.tree_util.tree_map(jnp.asarray, tangents))
        for mine, jaxs in zip(_leaves(ours), jax.tree_util.tree_leaves(theirs)):
            np.testing.assert_allclose(mine, np.asarray(jaxs), rtol=1e-12, atol=1e-12)


def test_batched_jvp_of_containers_under_numba_equals_python(monkeypatch):
    pytest.importorskip("numba")
    fn, args = CASES[0]
    tangents = tuple(_random_directions(a, 3) for a in args)
    _, compiled = s2s_ad.jvp(fn, args, tangents, backend="numba", batched=True)
    _, python = s2s_ad.jvp(fn, args, tangents, batched=True)
    for c, p in zip(_leaves(compiled), _leaves(python)):
        np.testing.assert_allclose(c, p, rtol=1e-12, atol=1e-12)
