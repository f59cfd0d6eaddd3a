"""Containers as arguments and results (dicts, lists, tuples, namedtuples, dataclasses, nested),
has_aux, methods and partials: against central differences per leaf, and JAX where installed."""
import dataclasses
import functools

import importlib.util

import numpy as np
import pytest

import s2s_ad
from conftest import assert_every_mode, assert_numba_gives_the_same_numbers, numeric_grad
import container_functions as cf

RNG = np.random.default_rng(21)


# -- an independent oracle: central differences per leaf, the container rebuilt by hand ----------


def _leaves(value):
    """(path, leaf) pairs of a container, in a fixed order, without s2s_ad's own flattening."""
    if isinstance(value, dict):
        return [((k,) + p, v) for k in value for p, v in _leaves(value[k])]
    if isinstance(value, (list, tuple)):  # namedtuples too
        return [((i,) + p, v) for i, item in enumerate(value) for p, v in _leaves(item)]
    if dataclasses.is_dataclass(value):
        return [((f.name,) + p, v) for f in dataclasses.fields(value) for p, v in _leaves(getattr(value, f.name))]
    if hasattr(value, "__dict__") and not isinstance(value, (np.ndarray, np.generic)):
        return [((k,) + p, v) for k in vars(value) for p, v in _leaves(vars(value)[k])]
    return [((), value)]


def _replaced(value, path, new):
    """A copy of ``value`` with the leaf at ``path`` replaced (the argument itself untouched)."""
    if not path:
        return new
    key, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, key: _replaced(value[key], rest, new)}
    if isinstance(value, list):
        return [_replaced(v, rest, new) if i == key else v for i, v in enumerate(value)]
    if isinstance(value, tuple):
        items = [_replaced(v, rest, new) if i == key else v for i, v in enumerate(value)]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    if dataclasses.is_dataclass(value):
        return dataclasses.replace(value, **{key: _replaced(getattr(value, key), rest, new)})
    copy = object.__new__(type(value))
    copy.__dict__.update(vars(value))
    copy.__dict__[key] = _replaced(vars(value)[key], rest, new)
    return copy


def _leaf_at(value, path):
    for key in path:
        value = value[key] if isinstance(value, (dict, list, tuple)) else getattr(value, key)
    return value


def assert_container_gradient(f, args, wrt=0, rtol=1e-5, atol=1e-6):
    """grad(f, wrt) against central differences leaf by leaf; the gradient has the argument's type."""
    got = s2s_ad.grad(f, wrt=wrt)(*args)
    container = args[wrt]
    assert type(got) is type(container), (f.__name__, type(got))
    for path, leaf in _leaves(container):
        if isinstance(leaf, (bool, str)) or leaf is None:  # structure, not data
            assert _leaf_at(got, path) == leaf
            continue

        def at(value, path=path):
            moved = list(args)
            moved[wrt] = _replaced(container, path, value)
            return f(*moved)
        want = numeric_grad(lambda v: at(v), (leaf,), 0)
        ours = _leaf_at(got, path)
        assert np.shape(ours) == np.shape(leaf), (f.__name__, path)
        np.testing.assert_allclose(ours, want, rtol=rtol, atol=atol, err_msg=f"{f.__name__} d/d{path}")
    return got


# -- arguments ---------------------------------------------------------------------------------


X3 = RNG.normal(size=3)


@pytest.mark.parametrize("f, args", [
    (cf.dict_loss, ({"w": RNG.normal(size=3), "b": 0.3}, X3)),
    (cf.dict_methods, ({"w": RNG.normal(size=2), "b": 0.3, "scale": 1.5}, X3)),
    (cf.mlp, ([(RNG.normal(size=(4, 3)), RNG.normal(size=4)), (RNG.normal(size=(2, 4)), RNG.normal(size=2))], X3)),
    (cf.mlp_indexed, ([RNG.normal(size=(4, 3)), RNG.normal(size=(2, 4)), RNG.normal(size=2)], X3)),
    (cf.nested, ({"encoder": {"w": RNG.normal(size=(2, 3)), "b": RNG.normal(size=2)},
                  "decoder": (RNG.normal(size=(3, 2)), RNG.normal(size=3)), "scale": 0.7}, X3)),
    (cf.namedtuple_loss, (cf.Affine(RNG.normal(size=3), 0.4), X3)),
    (cf.dataclass_loss, (cf.Params(RNG.normal(size=3), 0.4), X3)),
    (cf.tuple_loss, ((RNG.normal(size=3), 0.4), X3)),
    (cf.dict_in_branch, ({"w": RNG.normal(size=3)}, X3, 1.0)),
    (cf.dict_in_branch, ({"w": RNG.normal(size=3)}, X3, -1.0)),
    (cf.gradient_steps, ({"w": RNG.normal(size=3), "b": 0.2}, X3, 0)),
    (cf.gradient_steps, ({"w": RNG.normal(size=3), "b": 0.2}, X3, 3)),
    (cf.uses_helper, ({"w": RNG.normal(size=(2, 3)), "b": RNG.normal(size=2)}, X3)),
    (cf.config_loss, ({"w": RNG.normal(size=3)}, cf.Config(1.3, "tanh"), X3)),
    (cf.config_loss, ({"w": RNG.normal(size=3)}, cf.Config(1.3, "sin"), X3)),
    (cf.copy_then_write, ({"w": 0.7}, 1.3)),
    (cf.membership, ({"w": 0.7, "bias": 0.2}, 1.3)),
    (cf.membership, ({"w": 0.7}, 1.3)),
    (cf.by_index, ([RNG.normal(size=3), RNG.normal(size=1)], np.array([0.4, -0.8]))),
    (cf.int_keys, ({0: 0.5, 1: -1.5}, 1.3)),
    (cf.iterate_keys, ({"a": RNG.normal(size=2), "b": 3.0},)),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_container_arguments(f, args):
    assert_container_gradient(f, args)


def test_containers_built_in_the_body():
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    for f, args in [(cf.dict_built_inside, (x, y)), (cf.make_params, (x, 0.7)), (cf.fresh_dict_writes, (0.4,)),
                    (cf.augmented_items, (1.5,))]:
        got = s2s_ad.grad(f)(*args)
        np.testing.assert_allclose(got, numeric_grad(f, args, 0), rtol=1e-5, atol=1e-6, err_msg=f.__name__)


def test_a_container_and_an_array_together():
    params, x = {"w": RNG.normal(size=3), "b": 0.3}, RNG.normal(size=3)
    d_params, d_x = s2s_ad.grad(cf.dict_loss, wrt=(0, 1))(params, x)
    assert set(d_params) == {"w", "b"}
    np.testing.assert_allclose(d_x, numeric_grad(cf.dict_loss, (params, x), 1), rtol=1e-5, atol=1e-6)
    value, (again, _) = s2s_ad.value_and_grad(cf.dict_loss, wrt=("params", "x"))(params, x)
    assert value == pytest.approx(cf.dict_loss(params, x))
    np.testing.assert_allclose(again["w"], d_params["w"])


def test_a_dict_given_with_its_keys_in_another_order():
    x = RNG.normal(size=3)
    one = s2s_ad.grad(cf.dict_loss)({"w": X3, "b": 0.3}, x)
    other = s2s_ad.grad(cf.dict_loss)({"b": 0.3, "w": X3}, x)
    assert list(other) == ["b", "w"]
    np.testing.assert_allclose(one["w"], other["w"])
    assert one["b"] == pytest.approx(other["b"])


def test_types_are_kept():
    params = {"w": np.ones(3, dtype=np.float32), "b": np.float32(2.0)}
    got = s2s_ad.grad(cf.float32_loss)(params)
    assert got["w"].dtype == np.float32 and isinstance(got["b"], np.float32)
    np.testing.assert_allclose(got["w"], 2.0)
    np.testing.assert_allclose(got["b"], 3.0)
    got = s2s_ad.grad(cf.float32_loss)({"w": np.ones(3), "b": np.array(2.0)})
    assert isinstance(got["b"], np.ndarray) and got["b"].shape == () and float(got["b"]) == 3.0
    d_x = s2s_ad.grad(cf.dict_loss, wrt=1)({"w": X3, "b": 0.3}, np.ones(3, dtype=np.float32))
    assert d_x.dtype == np.float32
    pair = s2s_ad.grad(cf.tuple_loss)((np.ones(3), 0.5), np.ones(3))
    assert type(pair) is tuple


# -- has_aux ----------------------------------------------------------------------------------


def test_has_aux_returns_the_aux_beside_the_gradient():
    params, x = {"w": RNG.normal(size=3)}, RNG.normal(size=3)
    gradient, aux = s2s_ad.grad(cf.with_aux, has_aux=True)(params, x)
    loss = lambda w: cf.with_aux({"w": w}, x)[0]  # noqa: E731
    np.testing.assert_allclose(gradient["w"], numeric_grad(loss, (params["w"],), 0), rtol=1e-5, atol=1e-6)
    want = cf.with_aux(params, x)[1]
    assert set(aux) == {"pred", "norm"}
    np.testing.assert_allclose(aux["pred"], want["pred"])
    np.testing.assert_allclose(aux["norm"], want["norm"])
    (value, aux_again), gradient_again = s2s_ad.value_and_grad(cf.with_aux, has_aux=True)(params, x)
    assert value == pytest.approx(cf.with_aux(params, x)[0])
    np.testing.assert_allclose(aux_again["pred"], want["pred"])
    np.testing.assert_allclose(gradient_again["w"], gradient["w"])


def test_has_aux_with_numbers():
    gradient, aux = s2s_ad.grad(cf.with_aux_scalar, has_aux=True)(0.7)
    assert gradient == pytest.approx(2 * 0.7 * np.cos(0.49)) and aux == pytest.approx(0.49)
    (value, aux), gradient = s2s_ad.value_and_grad(cf.with_aux_scalar, has_aux=True)(0.7)
    assert value == pytest.approx(np.sin(0.49)) and aux == pytest.approx(0.49)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_has_aux_pair_after_a_raise_keeps_its_structure(backend):
    if backend == "numba":
        pytest.importorskip("numba")
    for x in (np.array([0.6, -1.1, 0.9]), np.array([-0.6, 1.1, -0.9])):
        (value, aux), gradient = s2s_ad.value_and_grad(cf.with_aux_after_a_raise, has_aux=True, backend=backend)(x)
        want_value, want_aux = cf.with_aux_after_a_raise(x)
        assert value == pytest.approx(want_value, rel=1e-12)
        assert aux["n"] == 3 and aux["tag"] == "tanh" and set(aux) == {"h", "n", "tag"}
        np.testing.assert_allclose(aux["h"], want_aux["h"])
        loss = lambda v: cf.with_aux_after_a_raise(v)[0]  # noqa: E731
        np.testing.assert_allclose(gradient, numeric_grad(loss, (x,), 0), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="out of range"):
        s2s_ad.grad(cf.with_aux_after_a_raise, has_aux=True, backend=backend)(np.full(3, 1e7))


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("f", [cf.with_aux_returned_from_a_loop, cf.with_aux_returned_in_a_loop_or_after_it],
                         ids=lambda f: f.__name__)
def test_has_aux_pair_returned_from_inside_a_loop(f, backend):
    if backend == "numba":
        pytest.importorskip("numba")
    for x in (np.array([0.6, -1.1, 0.9]), np.array([0.9, 0.2, 0.4]), np.array([-0.6, 1.1, -0.2])):
        (value, aux), gradient = s2s_ad.value_and_grad(f, has_aux=True, backend=backend)(x)
        want_value, want_aux = f(x)
        assert value == pytest.approx(want_value, rel=1e-12)
        assert set(aux) == set(want_aux)
        for key in want_aux:
            if isinstance(want_aux[key], np.ndarray):
                np.testing.assert_allclose(aux[key], want_aux[key], rtol=1e-12)
            else:
                assert aux[key] == want_aux[key]
        loss = lambda v: f(v)[0]  # noqa: E731
        np.testing.assert_allclose(gradient, numeric_grad(loss, (x,), 0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", [cf.lstm_state_of_an_array_and_a_number, cf.state_of_two_shapes],
                         ids=lambda f: f.__name__)
def test_a_state_of_items_of_different_shapes_carried_through_a_loop(f):
    # (h, c): its adjoint holds one adjoint per item (an array of objects), in every mode
    x = np.array([0.6, -1.1, 0.9])
    assert_every_mode(f, x.copy())
    assert_numba_gives_the_same_numbers(f, x.copy())


def test_a_container_holding_a_tuple_returned_after_a_raise_keeps_its_structure_in_vjp():
    x = np.array([0.6, -1.1, 0.9])
    out, pullback = s2s_ad.vjp(cf.dict_with_a_pair_after_a_raise, x)
    want = cf.dict_with_a_pair_after_a_raise(x)
    np.testing.assert_allclose(out["y"], want["y"])
    assert type(out["pair"]) is tuple and out["pair"][0] == pytest.approx(want["pair"][0])
    cotangent = {"y": np.array([0.5, -1.0, 2.0]), "pair": (1.5, np.array([1.0, 0.0, -1.0]))}

    def paired(v):
        got = cf.dict_with_a_pair_after_a_raise(v)
        return (np.sum(got["y"] * cotangent["y"]) + got["pair"][0] * cotangent["pair"][0]
                + np.sum(got["pair"][1] * cotangent["pair"][1]))
    np.testing.assert_allclose(pullback(cotangent)[0], numeric_grad(paired, (x,), 0), rtol=1e-5, atol=1e-6)


def test_has_aux_needs_a_pair():
    with pytest.raises(s2s_ad.TransformError, match=r"container_functions.py:\d+.*has_aux=True.*\(value, aux\)"):
        s2s_ad.grad(cf.dict_loss, has_aux=True)({"w": X3, "b": 0.3}, X3)


def test_has_aux_is_refused_for_higher_derivatives():
    with pytest.raises(TypeError, match="has_aux"):
        s2s_ad.grad(s2s_ad.grad(cf.with_aux_scalar, has_aux=True))


# -- methods and partials -----------------------------------------------------------------------


def test_a_bound_method_reading_self():
    model, x = cf.Model(RNG.normal(size=3), 1.5), RNG.normal(size=3)
    np.testing.assert_allclose(s2s_ad.grad(model.loss)(x), numeric_grad(model.loss, (x,), 0), rtol=1e-5, atol=1e-6)
    y = RNG.normal(size=3)
    np.testing.assert_allclose(s2s_ad.grad(model.direct, wrt="y")(x, y), model.w * x)


def test_a_method_differentiated_by_self():
    model, x = cf.Model(RNG.normal(size=3), 1.5), RNG.normal(size=3)
    got = assert_container_gradient(cf.Model.loss, (model, x))
    assert set(vars(got)) == {"w", "scale"}
    linear, target = cf.Linear(RNG.normal(size=(2, 3)), 0.5), np.ones(2)
    for method in (cf.Linear.loss, cf.Linear.loss_via_method):  # self(x) and self.forward(x)
        got = assert_container_gradient(method, (linear, x, target))
        assert isinstance(got, cf.Linear)


def test_partials():
    x = RNG.normal(size=3)
    f = functools.partial(cf.scaled, scale=2.0)
    np.testing.assert_allclose(s2s_ad.grad(f)(x), numeric_grad(f, (x,), 0), rtol=1e-5, atol=1e-6)
    by_scale = functools.partial(cf.scaled, x)
    assert s2s_ad.grad(by_scale, wrt="scale")(2.0) == pytest.approx(numeric_grad(by_scale, (2.0,), 0), rel=1e-6)
    shifted = functools.partial(cf.scaled, shift=0.5)
    assert s2s_ad.grad(shifted, wrt=1)(x, 2.0) == pytest.approx(numeric_grad(shifted, (x, 2.0), 1), rel=1e-6)


# -- forward mode, vjp, Jacobians and Hessians --------------------------------------------------


def test_jvp_and_vjp_with_container_arguments_and_results():
    params, x = {"w": RNG.normal(size=3), "b": 0.3}, RNG.normal(size=3)
    d_params = s2s_ad.grad(cf.dict_loss)(params, x)
    direction = {"w": RNG.normal(size=3), "b": 0.7}
    value, tangent = s2s_ad.jvp(cf.dict_loss, (params, x), (direction, np.zeros(3)))
    assert value == pytest.approx(cf.dict_loss(params, x))
    assert tangent == pytest.approx(np.sum(d_params["w"] * direction["w"]) + d_params["b"] * 0.7)
    out, pull = s2s_ad.vjp(cf.dict_loss, params, x)
    back, _ = pull(1.0)
    np.testing.assert_allclose(back["w"], d_params["w"])

    y = RNG.normal(size=3)
    out, tangent = s2s_ad.jvp(cf.returns_dict, (x, y), (np.ones(3), np.zeros(3)))
    assert out["s"] == pytest.approx(np.sum(x * y))
    assert tangent["s"] == pytest.approx(np.sum(y)) and np.allclose(tangent["v"], np.sin(y))
    out, pull = s2s_ad.vjp(cf.returns_dict, x, y)
    d_x, d_y = pull({"v": np.ones(3), "s": 1.0})  # keys in another order
    np.testing.assert_allclose(d_x, y + np.sin(y))
    np.testing.assert_allclose(d_y, x + x * np.cos(y))
    with pytest.raises(ValueError, match="structure"):
        pull({"s": 1.0})


@pytest.mark.slow
def test_jacobian_and_hessian_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def loss(params, x):
        h = jnp.tanh(params["w"] * x + params["b"])
        return jnp.sum(h ** 2)

    def returns_dict(x, y):
        return {"s": jnp.sum(x * y), "v": x * jnp.sin(y)}

    params, x = {"w": RNG.normal(size=3), "b": 0.3}, RNG.normal(size=3)
    ours, theirs = s2s_ad.hessian(cf.dict_loss)(params, x), jax.hessian(loss)(params, x)
    for a in params:
        for b in params:
            np.testing.assert_allclose(ours[a][b], theirs[a][b], rtol=1e-9, atol=1e-12, err_msg=f"H[{a}][{b}]")
    ours, theirs = s2s_ad.jacobian(cf.dict_loss)(params, x), jax.jacobian(loss)(params, x)
    for a in params:
        np.testing.assert_allclose(ours[a], theirs[a], rtol=1e-9, atol=1e-12)
    y = RNG.normal(size=3)
    ours = s2s_ad.jacobian(cf.returns_dict, wrt=(0, 1))(x, y)  # a tuple by wrt, as for arrays
    theirs = jax.jacobian(returns_dict, argnums=(0, 1))(x, y)
    for i in range(2):
        for key in ("s", "v"):
            np.testing.assert_allclose(ours[i][key], theirs[key][i], rtol=1e-9, atol=1e-12)
    model = cf.Model(RNG.normal(size=3), 1.5)
    np.testing.assert_allclose(s2s_ad.hessian(model.loss)(x), s2s_ad.hessian(cf.Model.loss, wrt=1)(model, x))


def test_mlp_gradient_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def mlp(layers, x):
        h = x
        for w, b in layers:
            h = jnp.tanh(w @ h + b)
        return jnp.sum(h ** 2)

    layers = [(RNG.normal(size=(4, 3)), RNG.normal(size=4)), (RNG.normal(size=(2, 4)), RNG.normal(size=2))]
    ours, theirs = s2s_ad.grad(cf.mlp)(layers, X3), jax.grad(mlp)(layers, X3)
    assert type(ours) is list and all(type(layer) is tuple for layer in ours)
    for (w, b), (w_j, b_j) in zip(ours, theirs):
        np.testing.assert_allclose(w, w_j, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(b, b_j, rtol=1e-10, atol=1e-13)


# -- refusals say why ---------------------------------------------------------------------------


@pytest.mark.parametrize("f, args, message", [
    (cf.computed_key, ({0: 1.0}, 0), r"a dict read with a key computed at run time: the keys must be constants"),
    (cf.dict_passed_to_numpy, ({"a": 1.0},), r"a dict used as a value: pass its items"),
    (cf.alias_then_write, (1.0,), r"assignment into b\[\.\.\.\]: b is the same dict as a"),
    (cf.held_in_a_list_then_written, (1.0,), r"assignment into d\[\.\.\.\]: d is the same dict as ds"),
    (cf.writes_argument_dict, ({"w": 1.0}, 2.0), r"assignment into p\[\.\.\.\]: it is an argument"),
    (cf.Holder(cf.Model(np.ones(3), 1.0)).loss, (np.ones(3),), r"the attribute \.w of a Model object: s2s_ad "
                                                                r"reads the attributes of self and of dataclasses"),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_refusals_name_the_line_and_the_reason(f, args, message):
    with pytest.raises(s2s_ad.TransformError, match=r"container_functions.py:\d+.*" + message):
        s2s_ad.grad(f, wrt=len(args) - 1 if f is cf.writes_argument_dict else 0)(*args)


def test_a_container_holding_itself_is_refused():
    loop = {"w": 1.0}
    loop["self"] = loop
    with pytest.raises(ValueError, match="contains itself"):
        s2s_ad.grad(cf.dict_loss)(loop, X3)


def test_a_registered_type():
    from s2s_ad.core import containers
    rebuilt = []

    def rebuild(keys, values):
        rebuilt.append(keys)
        return cf.Pair(*values)

    containers.register(cf.Pair, lambda p: (("first", "second"), (p.first, p.second)), rebuild)
    got = assert_container_gradient(cf.pair_loss, (cf.Pair(RNG.normal(size=3), 0.8), X3))
    assert isinstance(got, cf.Pair) and rebuilt == [("first", "second")]


def test_the_readme_example():
    params, x = {"w": RNG.normal(size=(2, 3)), "b": RNG.normal(size=2)}, RNG.normal(size=3)
    gradient, aux = s2s_ad.grad(cf.readme_loss, has_aux=True)(params, x)
    np.testing.assert_allclose(aux["h"], cf.readme_loss(params, x)[1]["h"])
    loss = lambda w, b: cf.readme_loss({"w": w, "b": b}, x)[0]  # noqa: E731
    np.testing.assert_allclose(gradient["w"], numeric_grad(loss, (params["w"], params["b"]), 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gradient["b"], numeric_grad(loss, (params["w"], params["b"]), 1), rtol=1e-5, atol=1e-6)


def test_a_callable_object():  # d(W x + b)/dx = W
    linear, x = cf.Linear(RNG.normal(size=(2, 3)), 0.5), RNG.normal(size=3)
    np.testing.assert_allclose(s2s_ad.jacobian(linear)(x), linear.w)
    out, tangent = s2s_ad.jvp(linear, (x,), (np.ones(3),))
    np.testing.assert_allclose(out, linear(x))
    np.testing.assert_allclose(tangent, linear.w.sum(axis=1))


def test_a_helper_given_a_container_reads_its_own_globals():
    params = {"w": RNG.normal(size=3)}
    np.testing.assert_allclose(s2s_ad.grad(cf.caller_with_a_local_like_a_global)(params)["w"], 0.5)


def test_a_method_from_a_base_class_in_another_module():  # it reads that module's SCALE = 3.0
    model, x = cf.Derived(RNG.normal(size=3)), RNG.normal(size=3)
    np.testing.assert_allclose(s2s_ad.grad(model.loss)(x), numeric_grad(model.loss, (x,), 0), rtol=1e-5, atol=1e-6)
    got = assert_container_gradient(cf.Derived.loss, (model, x))
    assert isinstance(got, cf.Derived)


def test_a_redefined_method_is_not_served_stale(monkeypatch):
    model = cf.Activated(0.5)
    gradient = s2s_ad.grad(model.loss)
    assert gradient(1.0) == pytest.approx(2 * 0.5 * np.cos(0.5))
    monkeypatch.setattr(cf.Activated, "act", cf.act_square)
    assert gradient(1.0) == pytest.approx(2 * 0.5 * 2.0)  # d/dx 2 w x^2


def test_flags_are_structure():
    x = RNG.normal(size=3)
    with_bias = {"w": RNG.normal(size=3), "use_bias": True, "bias": 0.3}
    got = assert_container_gradient(cf.flagged, (with_bias, x))
    assert got["use_bias"] is True  # a flag is kept, not differentiated
    assert_container_gradient(cf.flagged, ({"w": RNG.normal(size=3), "use_bias": False}, x))


def test_functional_updates():
    args = ({"w": RNG.normal(size=3)}, cf.Params(RNG.normal(size=3), 0.4), cf.Affine(0.2, 0.9), 0.7)
    for position in range(4):
        if position == 3:
            np.testing.assert_allclose(s2s_ad.grad(cf.functional_updates, wrt=3)(*args),
                                       numeric_grad(cf.functional_updates, args, 3), rtol=1e-5, atol=1e-6)
        else:
            assert_container_gradient(cf.functional_updates, args, wrt=position)


@pytest.mark.parametrize("x", [0.7, -0.4])
def test_has_aux_with_a_pair_from_returns_in_branches(x):
    gradient, aux = s2s_ad.grad(cf.aux_from_branches, has_aux=True)(x)
    assert gradient == pytest.approx(numeric_grad(lambda v: cf.aux_from_branches(v)[0], (x,), 0), rel=1e-6)
    assert aux == pytest.approx(cf.aux_from_branches(x)[1])


def test_arrays_of_another_library_in_a_dict_stay_data():
    """JAX arrays in a dict are leaves, differentiated through JAX's namespace (array_api.target),
    never constants (a zero gradient), never converted to NumPy; without array-api-compat, an
    ImportError says which extra to install."""
    jnp = pytest.importorskip("jax.numpy")
    given = ({"w": jnp.ones(3), "b": 0.3}, jnp.ones(3))
    if importlib.util.find_spec("array_api_compat") is None:
        with pytest.raises(ImportError, match=r"s2s_ad\[arrays\]"):
            s2s_ad.grad(cf.dict_loss)(*given)
        return
    got = s2s_ad.grad(cf.dict_loss)(*given)
    want = s2s_ad.grad(cf.dict_loss)({"w": np.ones(3), "b": 0.3}, np.ones(3))
    assert not isinstance(got["w"], np.ndarray) and hasattr(got["w"], "__array_namespace__")
    np.testing.assert_allclose(np.asarray(got["w"]), want["w"], rtol=1e-6)  # not a constant (zero gradient)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_the_loss_of_a_helper_returning_a_pair_with_a_dict_in_every_mode(backend):
    """helper(x)[0] and loss, aux = helper(x), the helper returning (loss, {...}) from a loop or after it:
    grad, jvp and the Hessian against central differences (Numba crashed with an SSAViolation, Python
    refused the helper)."""
    if backend == "numba":
        pytest.importorskip("numba")
    f = cf.loss_of_a_helper_with_aux
    for x in (np.array([0.6, -1.1, 0.9]), np.array([0.05, 0.02, -0.01])):
        want = numeric_grad(f, (x,), 0)
        np.testing.assert_allclose(s2s_ad.grad(f, backend=backend)(x), want, rtol=1e-6, atol=1e-8)
        tangent = np.array([0.3, -0.7, 1.1])
        _, along = s2s_ad.jvp(f, (x,), (tangent,), backend=backend)
        assert float(along) == pytest.approx(float(want @ tangent), rel=1e-6, abs=1e-8)
        columns = [(numeric_grad(f, (x + e,), 0) - numeric_grad(f, (x - e,), 0)) / 2e-5 for e in 1e-5 * np.eye(3)]
        np.testing.assert_allclose(s2s_ad.hessian(f, backend=backend)(x), np.array(columns).T, rtol=1e-3, atol=1e-4)
    if backend == "python":
        assert_every_mode(f, np.array([0.6, -1.1, 0.9]))
