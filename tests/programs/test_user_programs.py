"""Programs written the way users write them (tests/corpora/user_programs.py), checked in every mode.

For each program: ``grad`` against central differences and against JAX (its twin in
tests/corpora/user_programs_jax.py, writes as ``.at[].set``); ``jvp`` against JAX's jvp; ``vjp`` with
the pullback called twice (same result both times, the primal output it returned unchanged);
``hessian`` against JAX's hessian where it is cheap."""
import numpy as np
import pytest

import s2s_ad
import user_programs as up

pytestmark = pytest.mark.slow  # every user program against its JAX twin, in every mode: CI runs it (pytest -m "slow or not slow")

RNG = np.random.default_rng(7)
X3 = np.array([0.3, 0.7, -0.4])
X6 = np.array([0.4, -0.3, 0.9, 0.2, -0.7, 0.5])
XB = RNG.normal(size=(5, 3))
YB = RNG.normal(size=5)
PARAMS = {"W1": RNG.normal(size=(3, 4)) * 0.5, "b1": RNG.normal(size=4) * 0.1,
          "W2": RNG.normal(size=(4,)) * 0.5, "b2": 0.3}
LAYERS = [(RNG.normal(size=(3, 4)) * 0.5, RNG.normal(size=4) * 0.1),
          (RNG.normal(size=(4, 2)) * 0.5, RNG.normal(size=2) * 0.1)]

# name -> (args, hessian is cheap and defined)
CASES = {
    "heat_equation": ((np.array([0.0, 0.5, 1.0, 0.3, -0.2, 0.0]),), True),
    "leapfrog_oscillators": ((X3,), True),
    "leaky_integrator": ((np.array([0.4, -1.1]),), True),
    "rk4_decay": ((0.7,), True),
    "lotka_volterra_euler": ((np.array([1.1, 0.4, 0.9, 0.3]),), True),
    "normalise_rows_in_place": ((X6,), True),
    "slice_read_then_written": ((np.array([0.5, 1.5, 2.5, -0.3]),), True),
    "flipped_view_read_after_write": ((X6,), True),
    "fancy_index_with_repeats": ((np.array([0.5, -1.2, 0.8, 0.1]),), True),
    "row_view_scaled_in_place": ((X3,), True),
    "store_with_repeated_index": ((np.array([0.5, -1.2, 0.8]),), True),
    "gram_schmidt": ((X6 + np.array([1.0, 0, 0, 1.0, 0, 0]),), True),
    "mlp_loss": ((PARAMS, XB, YB), False),
    "mlp_loop_over_layers": ((LAYERS, XB), False),
    "softmax_cross_entropy": ((RNG.normal(size=9),), True),
    "attention": ((X6,), True),
    "layer_norm": ((X6,), True),
    "activation_by_name": ((X3,), True),
    "activation_by_argument": ((X3, "tanh"), True),
    "logsumexp_stable": ((np.array([1.0, 3.0, -2.0, 0.5]),), True),
    "logistic_nll": ((np.array([0.2, -0.5, 0.1]), XB, np.sign(YB)), True),
    "stable_sigmoid_loss": ((np.array([1.3, -0.7, 0.2]),), True),
    "huber": ((np.array([0.2, -1.4, 0.9, -0.1]),), True),
    "standardise_with_helper": ((np.array([0.3, 1.2, -0.8, 0.5]),), True),
    "multivariate_normal_logpdf": ((X6,), True),
    "spring_chain_energy": ((np.array([0.0, 0.1, 1.2, -0.1, 2.1, 0.3]),), True),
    "lennard_jones": ((np.array([0.0, 0.1, 1.2, -0.1, 0.4, 1.0]),), True),
    "power_iteration": ((np.array([1.0, 0.3, -0.2, 0.8]),), True),
    "bilinear_einsum": ((X3,), True),
    "inverse_and_det": ((np.array([0.5, 0.2, -0.1, 0.3]),), True),
    "trapezoid_work": ((np.array([0.1, 0.4, 0.9, 1.3, 1.6]),), True),
    "gd_with_early_exit": ((np.array([0.5, -0.3]),), True),
    "newton_sqrt": ((2.0,), True),
    "first_crossing": ((np.array([0.3, 0.4, 0.6, 1.0]),), True),
    "momentum_updates": ((X3,), True),
    "swap_recurrence": ((np.array([0.4, -0.6]),), True),
    "sum_over_list_of_arrays": (([np.array([0.1, 0.2]), np.array([[0.3, -0.4], [0.5, 0.6]]), np.array(0.7)],),
                                False),
    "stack_and_concatenate": ((X3,), True),
    "zero_d_array_input": ((np.array(0.3),), True),
    "horner": ((np.array([1.0, -0.5, 0.25, 0.3]),), True),
    "zip_weights_and_data": ((X3,), True),
    "ellipsis_and_newaxis": ((X6,), True),
    "clip_and_abs": ((np.array([0.3, -0.9, 1.4]),), True),
    "cumulative_and_diff": ((X3,), True),
    "nested_def_closure": ((X3,), True),
    "masked_update": ((np.array([0.3, -0.9, 1.4]),), True),
    "triu_pairs": ((X6,), True),
    "rebinding_argument_then_write": ((X3,), True),
    "product_of_argument_views_written": ((X3,), True),
    "value_changes_kind": ((X3,), True),
    "masks_combined": ((np.array([0.3, -0.9, 1.4]),), True),
    "scatter_add_into_scaled_ones": ((np.array([0.5, -1.2, 0.8, 0.1, 0.3]),), True),
    "float32_constant_inside": ((X3,), True),
    "tuple_rotated_in_a_loop": ((X3,), True),
    "tuple_rotated_no_trip": ((X3,), True),
    "exp_then_written": ((X3,), True),
    "recurrence_by_index": ((X3,), True),
    "diagonal_fill_and_repeat_update": ((X3,), True),
    "overlapping_slice_updates": ((X3,), True),
    "shifted_and_reversed_self_assignment": ((X3,), True),
    "rows_swapped_by_fancy_index": ((X3,), True),
    "helper_copies_and_writes": ((X3,), True),
    "rank_one_downdates": ((X3,), True),
    "number_becomes_0d_array": ((X3,), True),
    "carried_shape_grows": ((X3,), True),
    "float_into_int_array": ((X3,), True),
    "nested_parameter_tree": (({"layers": [{"W": RNG.normal(size=(3, 4)), "b": RNG.normal(size=4)},
                                           {"W": RNG.normal(size=(4, 2)), "b": RNG.normal(size=2)}],
                                "scale": 0.1}, XB), False),
    "fixed_point_with_tolerance": ((X3,), True),
    "comprehension_terms": ((X3,), True),
    "coefficients_from_dict": ((X3,), True),
    "lambda_to_helper": ((X3,), True),
}
VECTOR_CASES = {"simulate_trajectory": (X3,), "softmax_out": (np.array([0.3, -1.0, 2.0, 0.1]),)}


# --- trees: flatten/unflatten of dicts, lists, tuples, arrays, floats --------------------------

def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def _rebuild(tree, leaves):
    if isinstance(tree, dict):
        return {key: _rebuild(tree[key], leaves) for key in sorted(tree)}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_rebuild(item, leaves) for item in tree)
    return leaves.pop(0)


def _numeric_tree_grad(f, args, eps=1e-6):
    """Central differences of f by args[0], a tree; returns the list of leaf gradients."""
    leaves = [np.array(leaf, dtype=float) for leaf in _leaves(args[0])]
    out = []
    for k, leaf in enumerate(leaves):
        g = np.zeros_like(leaf)
        for index in np.ndindex(leaf.shape):
            vals = []
            for sign in (1, -1):
                trial = [lf.copy() for lf in leaves]
                trial[k][index] += sign * eps
                vals.append(float(f(_rebuild(args[0], trial), *args[1:])))
            g[index] = (vals[0] - vals[1]) / (2 * eps)
        out.append(g)
    return out


def _assert_tree_close(got, want, msg, rtol=1e-6, atol=1e-8):
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    assert len(got_leaves) == len(want_leaves), msg
    for g, w in zip(got_leaves, want_leaves):
        assert np.shape(g) == np.shape(w), (msg, np.shape(g), np.shape(w))
        np.testing.assert_allclose(np.asarray(g, dtype=float), np.asarray(w, dtype=float),
                                   rtol=rtol, atol=atol, err_msg=msg)


def _trip_counts(name, args):
    """Keyword arguments fixing, for the JAX twin, the branch decisions the NumPy program took."""
    if name == "gd_with_early_exit":
        x, theta = np.zeros_like(args[0]), args[0]
        for step in range(30):
            g = 2.0 * (x - theta) + 0.1 * x ** 3
            x = x - 0.1 * g
            if np.linalg.norm(g) < 1e-3:
                break
        return {"steps": step + 1}
    if name == "newton_sqrt":
        a = x = args[0]
        for it in range(20):
            x_new = 0.5 * (x + a / x)
            if abs(x_new - x) < 1e-12:
                return {"steps": it + 1}
            x = x_new
        return {"steps": 20}
    if name == "first_crossing":
        total = 0.0
        for i, v in enumerate(args[0]):
            total += v ** 2
            if 0.5 < total < 10.0:
                return {"stop": i}
        return {"stop": len(args[0])}
    if name == "fixed_point_with_tolerance":
        v = args[0]
        y, err, it = v.copy(), 1.0, 0
        while err > 1e-10 and it < 60:
            y_new = np.cos(y) * 0.5 + v * 0.1
            err, y, it = np.max(np.abs(y_new - y)), y_new, it + 1
        return {"steps": it}
    return {}


def _jax_twin(name, args=()):
    """jax and the JAX twin of ``name`` as a function of its first argument alone."""
    jax = pytest.importorskip("jax")
    import user_programs_jax as uj
    twin, fixed = getattr(uj, name), _trip_counts(name, args)
    return jax, lambda a, *rest: twin(a, *args[1:], **fixed)


def _to_jax(tree):
    import jax.numpy as jnp
    return _rebuild(tree, [jnp.asarray(leaf) if isinstance(leaf, np.ndarray) else leaf
                           for leaf in _leaves(tree)])


def _direction(tree, seed=3):
    rng = np.random.default_rng(seed)
    return _rebuild(tree, [rng.normal(size=np.shape(leaf)) if isinstance(leaf, np.ndarray)
                           else float(rng.normal()) for leaf in _leaves(tree)])


# --- the checks -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_against_finite_differences(name):
    fn = getattr(up, name)
    args, _ = CASES[name]
    got = s2s_ad.grad(fn)(*args)
    want = _numeric_tree_grad(fn, args)
    _assert_tree_close(_leaves(got), want, name, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_against_jax(name):
    jax, twin = _jax_twin(name, CASES[name][0])
    args, _ = CASES[name]
    got = s2s_ad.grad(getattr(up, name))(*args)
    want = jax.grad(twin)(_to_jax(args[0]))
    _assert_tree_close(got, want, name)


@pytest.mark.parametrize("name", sorted(CASES) + sorted(VECTOR_CASES))
def test_jvp_against_jax(name):
    args = CASES[name][0] if name in CASES else VECTOR_CASES[name]
    jax, twin = _jax_twin(name, args)
    tangent = _direction(args[0])
    rest = tuple(np.zeros_like(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else None
                 for a in args[1:])
    out, out_dot = s2s_ad.jvp(getattr(up, name), args, (tangent,) + rest)
    want, want_dot = jax.jvp(twin, (_to_jax(args[0]),), (_to_jax(tangent),))
    _assert_tree_close(out, want, name + " primal")
    _assert_tree_close(out_dot, want_dot, name + " tangent")


@pytest.mark.parametrize("name", sorted(CASES) + sorted(VECTOR_CASES))
def test_vjp_pullback_twice_against_jax(name):
    args = CASES[name][0] if name in CASES else VECTOR_CASES[name]
    jax, twin = _jax_twin(name, args)
    out, pullback = s2s_ad.vjp(getattr(up, name), *args)
    kept = np.array(out, copy=True)
    cotangent = _direction(np.asarray(out) if np.ndim(out) else float(out), seed=5)
    first = pullback(cotangent)
    second = pullback(cotangent)
    np.testing.assert_array_equal(np.asarray(out), kept, err_msg=name + ": the pullback changed the output")
    _assert_tree_close(first[0], second[0], name + ": the pullback called twice")
    want_out, jax_pullback = jax.vjp(twin, _to_jax(args[0]))
    _assert_tree_close(out, want_out, name + " primal")
    _assert_tree_close(first[0], jax_pullback(_to_jax(cotangent))[0], name + " cotangent")


@pytest.mark.parametrize("name", sorted(n for n, (_, cheap) in CASES.items() if cheap))
def test_hessian_against_jax(name):
    jax, twin = _jax_twin(name, CASES[name][0])
    args, _ = CASES[name]
    got = s2s_ad.hessian(getattr(up, name))(*args)
    want = jax.hessian(twin)(_to_jax(args[0]))
    _assert_tree_close(got, want, name, rtol=1e-6, atol=1e-7)


# --- programs with their own shape of check ---------------------------------------------------

def test_bound_method_of_a_model():
    jax = pytest.importorskip("jax")
    import user_programs_jax as uj
    x = np.array([0.4, -0.2, 0.9])
    got = s2s_ad.grad(up.MODEL.loss)(x)
    want = jax.grad(uj.model_loss, argnums=2)(up.MODEL.W, up.MODEL.b, x)
    _assert_tree_close(got, want, "MODEL.loss")
    h = s2s_ad.hessian(up.MODEL.loss)(x)
    _assert_tree_close(h, jax.hessian(uj.model_loss, argnums=2)(up.MODEL.W, up.MODEL.b, x), "hessian")


def test_dataclass_parameters():
    jax = pytest.importorskip("jax")
    import user_programs_jax as uj
    params = up.Gaussian(mu=np.array([0.1, -0.2]), log_sigma=0.3)
    data = np.array([[0.5, 0.1], [-0.3, 0.4], [0.2, -0.9]])
    got = s2s_ad.grad(up.gaussian_nll)(params, data)
    assert isinstance(got, up.Gaussian)
    want_mu, want_ls = jax.grad(uj.gaussian_nll, argnums=(0, 1))(params.mu, params.log_sigma, data)
    _assert_tree_close([got.mu, got.log_sigma], [want_mu, want_ls], "gaussian_nll")


def test_has_aux():
    jax = pytest.importorskip("jax")
    import user_programs_jax as uj
    w = np.array([0.2, -0.5, 0.1])
    (g, aux) = s2s_ad.grad(up.loss_with_aux, has_aux=True)(w, XB, YB)
    want_g, want_aux = jax.grad(uj.loss_with_aux, has_aux=True)(w, XB, YB)
    _assert_tree_close(g, want_g, "grad")
    _assert_tree_close(aux, want_aux, "aux")


def test_float32_in_float32_out():
    jax = pytest.importorskip("jax")
    import user_programs_jax as uj
    w = np.array([0.3, -0.2, 0.5], dtype=np.float32)
    g = s2s_ad.grad(up.float32_model)(w)
    assert g.dtype == np.float32
    want = jax.grad(uj.float32_model)(w.astype(np.float64))
    np.testing.assert_allclose(g, want, rtol=1e-5)


def test_zero_d_array_gives_zero_d_gradient():
    g = s2s_ad.grad(up.zero_d_array_input)(np.array(0.3))
    assert isinstance(g, np.ndarray) and g.shape == ()


# --- everyday code still refused: a TransformError at the user's line, never a wrong number ----------

REFUSED = sorted(name for name in vars(up) if name.startswith("refused_"))


@pytest.mark.parametrize("name", REFUSED)
def test_still_refused_at_the_users_line(name):
    import inspect
    fn = getattr(up, name)
    args = (np.array([0.3, -0.7, 1.1]),)
    with pytest.raises(s2s_ad.TransformError) as info:
        s2s_ad.grad(fn)(*args)
    first, last = fn.__code__.co_firstlineno, fn.__code__.co_firstlineno + len(inspect.getsource(fn).splitlines())
    message = str(info.value)
    assert "user_programs.py:" in message, message
    line = int(message.split("user_programs.py:")[1].split(":")[0].split(" ")[0])
    assert first < line < last, (name, message)


# --- checkpointed(steps, snapshots=c), as docs/api.md documents it---------------------------------------

def test_checkpointed_with_snapshots_as_documented():
    x = np.array([0.3, -0.5, 0.9])
    got = s2s_ad.grad(up.checkpointed_with_snapshots)(x)
    # (one component is about 1e-5: central differences only hold it to an absolute 1e-8)
    np.testing.assert_allclose(got, _numeric_tree_grad(up.checkpointed_with_snapshots, (x,))[0], rtol=1e-6,
                               atol=1e-8)


SQUARED_COSINE = lambda v: np.sum(v ** 2 * np.cos(v))  # noqa: E731  (how JAX users write a loss)


def test_grad_of_a_lambda():
    x = np.array([0.3, -0.5, 0.9])
    got = s2s_ad.grad(SQUARED_COSINE)(x)
    np.testing.assert_allclose(got, _numeric_tree_grad(SQUARED_COSINE, (x,))[0], rtol=1e-6)
    h = s2s_ad.hessian(SQUARED_COSINE)(x)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(x) - 4 * x * np.sin(x) - x ** 2 * np.cos(x)), atol=1e-12)
    data = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0]])
    got = s2s_ad.grad(lambda w: up.logistic_nll(w, data, np.array([1.0, -1.0])) + np.sum(w ** 3))(x)
    np.testing.assert_allclose(got, _numeric_tree_grad(
        lambda w: up.logistic_nll(w, data, np.array([1.0, -1.0])) + np.sum(w ** 3), (x,))[0], rtol=1e-6)
    out, pullback = s2s_ad.vjp(lambda w: np.sin(w) * 2.0, x)
    np.testing.assert_allclose(pullback(np.ones(3))[0], 2 * np.cos(x))


def test_two_lambdas_with_the_same_parameters_on_one_line_are_refused_at_that_line():
    first, second = (lambda v: np.sum(v)), (lambda v: np.sum(v ** 2))
    with pytest.raises(s2s_ad.TransformError, match="test_user_programs.py:"):
        s2s_ad.grad(second)(np.array([0.3, -0.5]))


FD_ONLY = ["scatter_after_a_view_was_read", "scatter_seen_through_an_alias", "masks_in_a_where", "masked_power_update"]


@pytest.mark.parametrize("name", FD_ONLY)
def test_every_mode_against_differences(name):
    """grad and vjp (twice) against central differences, jvp against the gradient, hessian against
    differences of the gradient."""
    fn = getattr(up, name)
    x = np.array([0.3, -0.7, 1.1, 0.5])
    want = _numeric_tree_grad(fn, (x,))[0]
    np.testing.assert_allclose(s2s_ad.grad(fn)(x), want, rtol=1e-5, atol=1e-6)
    out, pullback = s2s_ad.vjp(fn, x)
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-5, atol=1e-6)
    direction = np.array([0.5, -1.0, 0.25, 2.0])
    _, tangent = s2s_ad.jvp(fn, (x,), (direction,))
    np.testing.assert_allclose(tangent, want @ direction, rtol=1e-5, atol=1e-6)
    g = s2s_ad.grad(fn)
    by_differences = np.array([(g(x + 1e-5 * e) - g(x - 1e-5 * e)) / 2e-5 for e in np.eye(4)])
    np.testing.assert_allclose(s2s_ad.hessian(fn)(x), by_differences, rtol=1e-4, atol=1e-5)
