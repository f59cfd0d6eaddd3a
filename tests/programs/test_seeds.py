"""The seeds' worked examples reproduce their published answers."""
import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad
from seed_functions import deblur_loss, quadratic, rational, rational_by_steps, square_plus_product, tensor_example


@pytest.mark.parametrize("a, b, c, x", [(2.0, -3.0, 0.5, 1.5), (1.0, 1.0, 1.0, 0.0), (-0.5, 4.0, 2.0, -2.0)])
def test_quadratic_all_four_partials(a, b, c, x):
    d_a, d_b, d_c, d_x = s2s_ad.grad(quadratic, wrt=("a", "b", "c", "x"))(a, b, c, x)
    assert d_a == pytest.approx(x ** 2)
    assert d_b == pytest.approx(x)
    assert d_c == pytest.approx(1.0)
    assert d_x == pytest.approx(2 * a * x + b)


def test_tensor_example_at_3_10():
    assert s2s_ad.grad(tensor_example, wrt=(0, 1))(3.0, 10.0) == pytest.approx((16.0, 3.0))


@pytest.mark.parametrize("fn", [rational, rational_by_steps])
def test_rational_at_3_2(fn):
    d_x, d_y = s2s_ad.grad(fn, wrt=("x", "y"))(3.0, 2.0)
    assert d_x == pytest.approx(13 / 18)
    assert d_y == pytest.approx(-7 / 9)


def test_square_plus_product_at_2_3():
    assert s2s_ad.grad(square_plus_product, wrt=(0, 1))(2.0, 3.0) == pytest.approx((7.0, 2.0))


def test_seed_answers_hold_on_arrays_too():
    x, y = np.array([3.0, 2.0]), np.array([2.0, 3.0])
    d_x, d_y = s2s_ad.grad(lambda_free_sum_of_rational, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(d_x, [13 / 18, numeric_grad(rational, [2.0, 3.0], 0)])
    np.testing.assert_allclose(d_y, [-7 / 9, numeric_grad(rational, [2.0, 3.0], 1)])


def lambda_free_sum_of_rational(x, y):
    return np.sum((x + 1) * (x - y) / (x + y + 1))


def test_deblur_loss_gradient_matches_finite_differences():
    rng = np.random.default_rng(4)
    guess, observed = rng.uniform(size=(5, 6)), rng.uniform(size=(5, 6))
    got = s2s_ad.grad(deblur_loss)(guess, observed)
    np.testing.assert_allclose(got, numeric_grad(deblur_loss, [guess, observed], 0), rtol=1e-6, atol=1e-8)


def test_deblur_loss_with_pixel_loops_matches_the_vectorised_one():
    from seed_functions import deblur_loss_loops

    rng = np.random.default_rng(5)
    guess, observed = rng.uniform(size=(4, 5)), rng.uniform(size=(4, 5))
    looped = s2s_ad.grad(deblur_loss_loops)(guess, observed)
    vectorised = s2s_ad.grad(deblur_loss)(guess, observed)
    np.testing.assert_allclose(looped, vectorised, rtol=1e-10)
    np.testing.assert_allclose(looped, numeric_grad(deblur_loss_loops, [guess, observed], 0), rtol=1e-6, atol=1e-8)
