"""Every function the API returns pickles by reference to the user's function and works in
another process (issue 21): checked against closed-form gradients, in processes started with
``spawn`` (which import everything afresh) through ``concurrent.futures`` and ``multiprocessing``."""
import copy
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import s2s_ad

import pickled_programs as pf

X = np.array([0.0, 1.3, 2.1, 3.5, 3.9])


def test_a_gradient_pickles_by_reference_and_gives_the_same_numbers():
    df = s2s_ad.grad(pf.energy)
    again = pickle.loads(pickle.dumps(df))
    assert again is not df
    np.testing.assert_allclose(again(X), pf.energy_gradient(X))
    assert len(pickle.dumps(df)) < 400  # a reference, not the generated code or a cache


@pytest.mark.parametrize("make", [
    lambda: s2s_ad.grad(pf.energy, wrt="k"),
    lambda: s2s_ad.value_and_grad(pf.energy, wrt=(0, 1)),
    lambda: s2s_ad.grad(pf.Spring(3.0).energy),
    lambda: s2s_ad.grad(s2s_ad.grad(lambda_free_cubic)),
    lambda: s2s_ad.hessian(pf.energy),
    lambda: s2s_ad.jacobian(pf.squares),
])
def test_every_gradient_form_survives_pickle_and_deepcopy(make):
    df = make()
    x = 0.7 if getattr(df, "__name__", "").endswith("cubic") else X
    expected = df(x)
    for copied in (pickle.loads(pickle.dumps(df)), copy.deepcopy(df)):
        got = copied(x)
        if isinstance(expected, tuple):
            for e, g in zip(_flat(expected), _flat(got)):
                np.testing.assert_allclose(g, e)
        else:
            np.testing.assert_allclose(got, expected)


def lambda_free_cubic(x):
    return x ** 3


def _flat(value):
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _flat(item)]
    return [value]


def test_a_decorated_function_pickles_as_its_module_name():
    assert pickle.loads(pickle.dumps(pf.decorated_energy)) is pf.decorated_energy
    np.testing.assert_allclose(pf.decorated_energy(X), pf.energy_gradient(X))


def test_the_vjp_pullback_pickles_and_runs_the_forward_sweep_again():
    out, vjp_fn = s2s_ad.vjp(pf.squares, X)
    again = pickle.loads(pickle.dumps(vjp_fn))
    cotangent = (np.arange(5.0), 2.0)
    expected = 2 * X * cotangent[0] + cotangent[1]
    np.testing.assert_allclose(vjp_fn(cotangent)[0], expected)
    np.testing.assert_allclose(again(cotangent)[0], expected)


def test_a_pullback_whose_forward_sweep_drew_random_numbers_refuses_to_pickle():
    _, vjp_fn = s2s_ad.vjp(pf.noisy, X)
    with pytest.raises(TypeError, match="drew random numbers"):
        pickle.dumps(vjp_fn)


def test_a_lambda_the_user_wrote_is_named_when_it_cannot_pickle():
    df = s2s_ad.grad(lambda x: x ** 2)
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        pickle.dumps(df)


@pytest.mark.slow
def test_process_pool_under_spawn_maps_the_gradient_itself():
    points = [X + i for i in range(4)]
    df = s2s_ad.grad(pf.energy)
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(pool.map(df, points))
        handed = list(pool.map(pf.gradient_in_child, [pf.decorated_energy] * 2, points[:2]))
    for point, got in zip(points, results):
        np.testing.assert_allclose(got, pf.energy_gradient(point))
    for point, got in zip(points, handed):
        np.testing.assert_allclose(got, pf.energy_gradient(point))


@pytest.mark.slow
def test_multiprocessing_pool_maps_the_gradient_and_a_pullback():
    df = s2s_ad.grad(pf.energy, wrt="k")
    _, vjp_fn = s2s_ad.vjp(pf.squares, X)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        by_k = pool.map(df, [X, X * 2])
        pulled = pool.map(vjp_fn, [(np.ones(5), 0.0), (np.zeros(5), 1.0)])
    for x, got in zip([X, X * 2], by_k):
        np.testing.assert_allclose(got, 0.5 * np.sum((np.diff(x) - 1.0) ** 2))
    np.testing.assert_allclose(pulled[0][0], 2 * X)
    np.testing.assert_allclose(pulled[1][0], np.ones(5))
