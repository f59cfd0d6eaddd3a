"""Vector reverse mode (issue 34): ``vjp_fn(cotangents, batched=True)`` pulls ``p`` cotangents (a leading axis of
directions) back through one run of the reverse sweep (s2s_ad/api/batched.py, ``batched_pullback``).

Oracles: one pullback per direction, central differences (the dot-product test ``<c, J t>`` against
``<vjp(c), t>``), and ``jax.vmap`` of ``jax.vjp``'s pullback.  Each batched case also asserts that the reverse
sweep really ran once for all directions, and each fallback case that it did not, so that neither path can
pass for the other."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import matrices
from s2s_ad.api import pullback as pullback_module


def elementwise(x, y):
    return np.sin(x) * y + np.exp(0.1 * x) / (1.0 + y * y) - x ** 3


def loop_and_branch(x, y):
    s = 0.0
    v = x.copy()
    for k in range(3):
        if np.sum(v) > 0.5:
            v = np.tanh(v) * y[k]
        else:
            v = v * v + y[k]
        s = s + np.sum(v)
    return v * s


def element_writes(x, y):
    out = np.zeros(4)
    for i in range(4):
        if x[i] > 0:
            out[i] = x[i] * y[i % 3] + x[(i + 1) % 4] ** 2
        else:
            out[i] = np.sin(x[i]) * y[0]
    out[1:3] = out[1:3] * 2.0 + x[:2]
    return out * x[::-1] + x[np.array([0, 0, 2, 3])]


def _squash(v, w):
    return np.tanh(v) * w + v * v


def with_a_helper(x, y):
    h = _squash(x, y[0])
    return _squash(h, y[1]) * np.sum(y * y)


def matrices_and_axes(a, y):
    m = a.T @ a
    return m @ np.sin(y) + np.sum(np.cos(a) * 2.0, axis=0) * y + np.mean(a * a, axis=1).sum()


def scalar_result(x, y):
    return np.sum(np.sin(x) * x) * y[0] + np.prod(y[1:])


def number_argument(x, y):
    return np.sin(x) * y[0] + x * x * np.sum(y)


def dict_result(x, y):
    return {"a": np.sin(x) * y[0], "b": np.sum(x * x) * y}


def dict_argument(p, y):
    return np.tanh(p["w"] * y) + p["b"] * np.sum(y)


def joined(a, y):  # np.concatenate (by an axis and flattened) and np.stack of lists: adjoints split back
    m = a.reshape(3, 4)
    wide = np.concatenate([m, np.sin(m) * y[:, None]], axis=1)
    flat = np.concatenate([m, m * m], axis=None)[:5]
    both = np.stack([np.sum(wide, axis=0)[:4], np.cos(m[0])], axis=0)
    return np.concatenate([wide.ravel()[:6], flat, both.ravel() * y[0]])


def no_batched_form(x, y):  # a running sum by np.convolve, which has no batched form: one reverse sweep per direction
    out = np.zeros(4)
    for i in range(4):
        out[i] = x[i] * y[i % 3]
    return np.convolve(out * y[0], np.ones(4))[:4] + x


def refused_after_writes(x, y):  # the reverse sweep puts slices back before it meets np.convolve's adjoint
    c = np.convolve(x, np.ones(4))[:4]  # (the running sum)
    out = np.zeros(4)
    for i in range(4):
        out[i] = c[i] * y[i % 3]
    return out * x


RNG = np.random.default_rng(3434)
V4, V3 = RNG.normal(size=4), RNG.normal(size=3)
A43 = RNG.normal(size=(4, 3))
A12 = RNG.normal(size=12)
CASES = [
    (elementwise, (V3.copy(), V3[::-1].copy())),
    (loop_and_branch, (V4 * 0.3, V3)),
    (loop_and_branch, (V4 * 0.3 - 2.0, V3)),  # the other branch
    (element_writes, (V4, V3)),
    (element_writes, (-V4, V3)),  # the other branches
    (with_a_helper, (V4, V3)),
    (matrices_and_axes, (A43, V3)),
    (scalar_result, (V4, V3)),
    (number_argument, (0.7, V3)),
    (dict_result, (V4, V3)),
    (dict_argument, ({"w": V3, "b": 0.4}, V3[::-1].copy())),
    (joined, (A12, V3)),
]
IDS = [f"{fn.__name__}-{k}" for k, (fn, _) in enumerate(CASES)]


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _leaves(value[key])]
    return [value]


def _cotangents(out, count):
    if isinstance(out, dict):
        return {key: _cotangents(v, count) for key, v in out.items()}
    return RNG.normal(size=(count,) + np.shape(out))


def _direction(value, d):
    return {key: _direction(v, d) for key, v in value.items()} if isinstance(value, dict) else value[d]


def _spy(monkeypatch):
    """A list that gets, per batched pullback call, whether the reverse sweep took every direction at once."""
    swept = []
    real = pullback_module.batched_pullback

    def spy(*args):
        result = real(*args)
        swept.append(result is not None)
        return result
    monkeypatch.setattr(pullback_module, "batched_pullback", spy)
    return swept


def _assert_same(batched, each, rtol=1e-12):
    for k, adjoint in enumerate(batched):
        for d, one in enumerate(each):
            got, want = _leaves(_direction(adjoint, d)), _leaves(one[k])
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12)


def _shifted(args, tangents, s):
    def one(a, t):
        if isinstance(a, dict):
            return {key: one(a[key], t[key]) for key in a}
        return a + s * t
    return tuple(one(a, t) for a, t in zip(args, tangents))


def _central_dot(fn, args, cotangent, tangents, eps=1e-6):
    """``<cotangent, J tangents>`` by central differences."""
    plus, minus = fn(*_shifted(args, tangents, eps)), fn(*_shifted(args, tangents, -eps))
    return sum(np.sum(np.asarray(c) * (np.asarray(p) - np.asarray(m)) / (2 * eps))
               for c, p, m in zip(_leaves(cotangent), _leaves(plus), _leaves(minus)))


def _random_like(value):
    if isinstance(value, dict):
        return {key: _random_like(v) for key, v in value.items()}
    return RNG.normal(size=np.shape(value)) if np.ndim(value) else float(RNG.normal())


@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_a_batched_pullback_equals_one_pullback_per_direction_and_differences(fn, args, monkeypatch):
    swept = _spy(monkeypatch)
    count = 5
    out, vjp_fn = s2s_ad.vjp(fn, *args)
    cotangents = _cotangents(out, count)
    batched = vjp_fn(cotangents, batched=True)
    assert swept == [True]  # one reverse sweep took all five directions
    assert len(batched) == len(args)
    for adjoint, arg in zip(batched, args):
        for a, leaf in zip(_leaves(adjoint), _leaves(arg)):
            assert np.shape(a) == (count,) + np.shape(leaf)
    each = [vjp_fn(_direction(cotangents, d)) for d in range(count)]
    _assert_same(batched, each)
    tangents = tuple(_random_like(a) for a in args)
    for d in range(count):
        pulled = sum(np.sum(np.asarray(g) * np.asarray(t)) for adjoint, tangent in zip(batched, tangents)
                     for g, t in zip(_leaves(_direction(adjoint, d)), _leaves(tangent)))
        np.testing.assert_allclose(pulled, _central_dot(fn, args, _direction(cotangents, d), tangents),
                                   rtol=1e-6, atol=1e-6)


def test_the_pullback_takes_batched_and_single_calls_in_any_order():
    """``element_writes`` puts overwritten slices back in its reverse sweep: each call after the first
    records the tape again, the batched one too."""
    out, vjp_fn = s2s_ad.vjp(element_writes, V4, V3)
    cotangents = RNG.normal(size=(3, 4))
    first = vjp_fn(cotangents, batched=True)
    single = vjp_fn(cotangents[1])
    again = vjp_fn(cotangents, batched=True)
    for k in range(2):
        np.testing.assert_allclose(first[k][1], single[k], rtol=1e-13)
        np.testing.assert_array_equal(first[k], again[k])


@pytest.mark.parametrize("fn", [no_batched_form, refused_after_writes])
def test_an_operation_without_a_batched_form_runs_one_pullback_per_direction(fn, monkeypatch):
    swept = _spy(monkeypatch)
    out, vjp_fn = s2s_ad.vjp(fn, V4, V3)
    cotangents = RNG.normal(size=(4, 4))
    batched = vjp_fn(cotangents, batched=True)
    assert swept == [False]  # refused, not guessed: the same numbers one direction at a time
    each = [s2s_ad.vjp(fn, V4, V3)[1](c) for c in cotangents]  # (each from a pullback of its own)
    _assert_same(batched, each, rtol=1e-14)
    if fn is no_batched_form:
        J = np.cumsum(np.diag(V3[np.arange(4) % 3]) * V3[0], axis=0) + np.eye(4)  # d out / d x, closed form
    else:
        c = np.cumsum(V4)
        J = np.diag(c * V3[np.arange(4) % 3]) + np.tril(np.ones((4, 4))) * (V3[np.arange(4) % 3] * V4)[:, None]
    np.testing.assert_allclose(batched[0], cotangents @ J, rtol=1e-12)


def test_types_of_the_arguments_are_kept():
    def typed(x, n, name, y):
        return x * n + y * len(name)
    x32 = V3.astype(np.float32)
    out, vjp_fn = s2s_ad.vjp(typed, x32, 3, "ab", 2.0)
    cotangents = RNG.normal(size=(2, 3)).astype(np.float32)
    batched = vjp_fn(cotangents, batched=True)
    assert batched[0].dtype == np.float32 and batched[0].shape == (2, 3)
    assert batched[2] is None  # a string has no derivative
    np.testing.assert_allclose(batched[0], cotangents * 3, rtol=1e-6)
    np.testing.assert_allclose(batched[1], cotangents @ x32, rtol=1e-5)
    np.testing.assert_allclose(batched[3], 2.0 * cotangents.sum(axis=1), rtol=1e-5)


def test_cotangents_without_a_direction_axis_are_refused():
    out, vjp_fn = s2s_ad.vjp(elementwise, V3, V3)
    with pytest.raises(ValueError, match=r"shaped \(directions,\) \+ \(3,\)"):
        vjp_fn(np.ones(3), batched=True)
    with pytest.raises(ValueError, match="leading axis"):
        vjp_fn(np.ones((0, 3)), batched=True)
    out, vjp_fn = s2s_ad.vjp(dict_result, V4, V3)
    with pytest.raises(ValueError, match="one number of directions"):
        vjp_fn({"a": np.ones((2, 4)), "b": np.ones((3, 3))}, batched=True)
    with pytest.raises(ValueError, match="structure"):
        vjp_fn(np.ones((2, 4)), batched=True)


def test_one_direction_is_a_leading_axis_of_one():
    out, vjp_fn = s2s_ad.vjp(loop_and_branch, V4 * 0.3, V3)
    c = RNG.normal(size=(1, 4))
    batched = vjp_fn(c, batched=True)
    _assert_same(batched, [vjp_fn(c[0])], rtol=1e-14)


def _jax_twins(jnp):
    """The cases above in JAX (branches as ``where``, element writes as ``.at[].set``), at the same points."""
    def loop_and_branch_j(x, y):
        s, v = 0.0, x
        for k in range(3):
            v = jnp.where(jnp.sum(v) > 0.5, jnp.tanh(v) * y[k], v * v + y[k])
            s = s + jnp.sum(v)
        return v * s

    def element_writes_j(x, y):
        out = jnp.zeros(4)
        for i in range(4):
            out = out.at[i].set(jnp.where(x[i] > 0, x[i] * y[i % 3] + x[(i + 1) % 4] ** 2, jnp.sin(x[i]) * y[0]))
        out = out.at[1:3].set(out[1:3] * 2.0 + x[:2])
        return out * x[::-1] + x[jnp.array([0, 0, 2, 3])]

    def squash(v, w):
        return jnp.tanh(v) * w + v * v

    def with_a_helper_j(x, y):
        return squash(squash(x, y[0]), y[1]) * jnp.sum(y * y)

    def matrices_and_axes_j(a, y):
        m = a.T @ a
        return m @ jnp.sin(y) + jnp.sum(jnp.cos(a) * 2.0, axis=0) * y + jnp.mean(a * a, axis=1).sum()

    def dict_result_j(x, y):
        return {"a": jnp.sin(x) * y[0], "b": jnp.sum(x * x) * y}

    return [(loop_and_branch, loop_and_branch_j, (V4 * 0.3, V3)), (loop_and_branch, loop_and_branch_j, (V4 * 0.3 - 2.0, V3)),
            (element_writes, element_writes_j, (V4, V3)), (element_writes, element_writes_j, (-V4, V3)),
            (with_a_helper, with_a_helper_j, (V4, V3)), (matrices_and_axes, matrices_and_axes_j, (A43, V3)),
            (dict_result, dict_result_j, (V4, V3))]


def test_a_batched_pullback_equals_jax_vmap_of_its_vjp(monkeypatch):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    swept = _spy(monkeypatch)
    twins = _jax_twins(jnp)
    for fn, twin, args in twins:
        out, vjp_fn = s2s_ad.vjp(fn, *args)
        cotangents = _cotangents(out, 6)
        ours = vjp_fn(cotangents, batched=True)
        _, jax_vjp = jax.vjp(twin, *(jnp.asarray(a) for a in args))
        theirs = jax.vmap(jax_vjp)(jax.tree_util.tree_map(jnp.asarray, cotangents))
        for mine, jaxs in zip(ours, theirs):
            np.testing.assert_allclose(mine, np.asarray(jaxs), rtol=1e-12, atol=1e-12)
    assert swept == [True] * len(twins)


def test_a_batched_pullback_under_numba_equals_one_pullback_per_direction(monkeypatch):
    pytest.importorskip("numba")
    swept = _spy(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)  # (the split form runs as Python)
        out, vjp_fn = s2s_ad.vjp(element_writes, V4, V3, backend="numba")
    cotangents = RNG.normal(size=(4, 4))
    batched = vjp_fn(cotangents, batched=True)
    # parts compiled apart (numba/handed.py) take one compiled call per direction; parts run as Python, one sweep
    assert swept == ([] if vjp_fn._split.handed else [True])
    _, python_fn = s2s_ad.vjp(element_writes, V4, V3)
    _assert_same(batched, [python_fn(c) for c in cotangents])


def wide(a, y):  # more inputs than outputs: reverse mode, one row per output element
    out = np.zeros(5)
    for i in range(5):
        if a[i % 4, 0] > 0:
            out[i] = np.sum(np.sin(a[i % 4]) * y) + y[i % 3] ** 2
        else:
            out[i] = np.sum(a[i % 4] ** 2) * y[0]
    return out * np.mean(a)


def wide_without_a_batched_form(a, y):
    return np.convolve(np.sum(a * y, axis=1), np.ones(4))[:4] * y[0]  # (a running sum)


@pytest.mark.parametrize("chunk", [1, 2, 3, 64])
@pytest.mark.parametrize("fn", [wide, wide_without_a_batched_form])
def test_a_reverse_mode_jacobian_in_chunks_equals_one_pullback_per_row_and_differences(fn, chunk, monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)  # (small chunks batched too: the path under test)
    args = (A43, V3)
    out, vjp_fn = s2s_ad.vjp(fn, *args)  # (before the spy: the first call loads the rules, whose checks pull back)
    swept = _spy(monkeypatch)
    J = s2s_ad.jacobian(fn, wrt=(0, 1), chunk=chunk)(*args)
    batches = [n for n in [chunk] * (out.size // chunk) + [out.size % chunk] if n >= 2]
    # one reverse sweep per chunk of rows; where refused, once (the pullback remembers it), then one per row
    assert swept == ([True] * len(batches) if fn is wide else [False] * min(len(batches), 1))
    for k in range(2):
        assert J[k].shape == out.shape + np.shape(args[k])
        for row in range(out.size):
            np.testing.assert_allclose(J[k][row], vjp_fn(np.eye(out.size)[row])[k], rtol=1e-12, atol=1e-12)
        for index in np.ndindex(np.shape(args[k])):
            unit = np.zeros(np.shape(args[k]))
            unit[index] = 1.0
            tangents = tuple(unit if j == k else np.zeros(np.shape(args[j])) for j in range(2))
            step = (fn(*_shifted(args, tangents, 1e-6)) - fn(*_shifted(args, tangents, -1e-6))) / 2e-6
            np.testing.assert_allclose(J[k][(...,) + index], step, rtol=1e-5, atol=1e-6)


def joined_scalar(a, y):
    return np.sum(joined(a, y) ** 2)


def test_a_hessian_through_joined_arrays_batched_equals_one_pass_per_element(monkeypatch):
    """Forward over reverse: the tangent code of the gradient runs the batched adjoints of np.concatenate
    and np.stack too (their pieces split along the same axis in every direction)."""
    monkeypatch.setattr(matrices, "FEWEST", 2)
    swept, real = [], matrices.batched_sweep
    monkeypatch.setattr(matrices, "batched_sweep", lambda *a: swept.append(real(*a)) or swept[-1])
    H = s2s_ad.hessian(joined_scalar, chunk=64)(A12, V3)
    assert len(swept) == 1 and swept[0] is not None  # one sweep of 12 directions
    H1 = s2s_ad.hessian(joined_scalar, chunk=1)(A12, V3)
    np.testing.assert_allclose(H, H1, rtol=1e-12, atol=1e-12)
    g = s2s_ad.grad(joined_scalar)
    for j in range(12):
        e = np.eye(12)[j] * 1e-6
        np.testing.assert_allclose(H[:, j], (g(A12 + e, V3) - g(A12 - e, V3)) / 2e-6, rtol=1e-5, atol=1e-6)
