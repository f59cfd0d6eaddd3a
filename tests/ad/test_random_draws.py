"""Random draws replayed in every pass (issues 18 and 22): the derivative is that of the function as it ran.

Generators passed in, made in the function or read from a module, and the global ``np.random.*``
and ``random.*``: every pass of a derivative taken in several (forward sweep, reverse sweep, jvp,
hessian, jacobian, a pullback called again, the self-check) sees the draws of one call.  The oracle
is central differences taken with the same seed, so each evaluation sees the same draws.
"""
import random

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError

X = np.array([0.3, -0.5, 0.7])
STEP = 1e-6

RNG = np.random.default_rng(11)  # a module-level generator object, read by name


def noise_from_argument(x, rng):
    noise = rng.normal(size=3)
    return np.sum(np.sin(x) * noise) + np.sum(x * x * rng.uniform(1.0, 2.0, size=3))


def noise_made_here(x):
    rng = np.random.default_rng(0)
    noise = rng.normal(size=3)
    return np.sum(np.sin(x) * noise * x)


def noise_from_random_state(x):
    noise = np.random.RandomState(0).randn(3)
    return np.sum(np.cos(x) * noise * x)


def noise_from_module_generator(x):
    return np.sum(np.sin(x) * RNG.normal(size=3) * x)


class _Settings:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)


SETTINGS = _Settings(13)  # a generator held by a module-level object: SETTINGS.rng.normal()


def noise_from_an_object_attribute(x):
    return np.sum(np.sin(x) * SETTINGS.rng.normal(size=3) * x)


def noise_from_global_state(x):
    return np.sum(np.sin(x) * np.random.normal(size=3) * x)


def unused_draw_first(x, rng):
    unused = rng.normal(size=3)
    used = rng.normal(size=3)
    return np.sum(np.sin(x) * used)


def draws_in_a_loop(x, rng):
    total = 0.0
    for _ in range(4):
        total = total + np.sum(np.tanh(x * rng.standard_normal(3)))
    return total


def python_random_argument(x, r):
    return np.sum(np.sin(x)) * r.gauss(0.0, 1.0) + np.sum(x * x) * r.random()


def _noisy_helper(v, rng):
    return v * rng.normal(size=3)


def helper_draws(x, rng):
    return np.sum(np.sin(_noisy_helper(x, rng)) * x)


def noise_then_write(x, rng):
    b = (x * rng.normal(size=3)).copy()
    b[0] = b[1] * b[2]
    return b * b


def _central(f, x, seeded_args):
    """Central differences of f at x, each evaluation with freshly seeded extra arguments."""
    result = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = STEP
        result[i] = (f(x + step, *seeded_args()) - f(x - step, *seeded_args())) / (2 * STEP)
    return result


def _generator():
    return np.random.default_rng(5)


CASES = [
    (noise_from_argument, lambda: (_generator(),)),
    (noise_made_here, lambda: ()),
    (noise_from_random_state, lambda: ()),
    (unused_draw_first, lambda: (_generator(),)),
    (draws_in_a_loop, lambda: (_generator(),)),
    (python_random_argument, lambda: (random.Random(3),)),
    (helper_draws, lambda: (_generator(),)),
]


@pytest.mark.parametrize("f, seeded", CASES, ids=[f.__name__ for f, _ in CASES])
def test_the_gradient_is_that_of_the_function_as_it_ran(f, seeded):
    expected = _central(f, X, seeded)
    value, gradient = s2s_ad.value_and_grad(f)(X, *seeded())
    assert value == pytest.approx(f(X, *seeded()), rel=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, seeded", CASES, ids=[f.__name__ for f, _ in CASES])
def test_the_self_check_replays_the_draws(f, seeded):
    """grad(check=True) compares with forward mode, which must see the reverse sweep's draws:
    no false GradientCheckError, and the gradient is the one without the check."""
    checked = s2s_ad.grad(f, check=True)(X, *seeded())
    np.testing.assert_allclose(checked, s2s_ad.grad(f)(X, *seeded()), rtol=1e-12)


@pytest.mark.parametrize("f, seeded", CASES, ids=[f.__name__ for f, _ in CASES])
def test_hessian_replays_the_draws_in_each_pass(f, seeded):
    gradient = s2s_ad.grad(f)
    expected = np.stack([_central(lambda x, *a, i=i: gradient(x, *a)[i], X, seeded) for i in range(3)])
    np.testing.assert_allclose(s2s_ad.hessian(f)(X, *seeded()), expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f, seeded", CASES, ids=[f.__name__ for f, _ in CASES])
def test_jvp_draws_what_the_function_draws(f, seeded):
    direction = np.array([0.2, -1.0, 0.5])
    value, along = s2s_ad.jvp(f, (X,) + seeded(), (direction,) + (None,) * len(seeded()))
    assert value == pytest.approx(f(X, *seeded()), rel=1e-12)
    assert along == pytest.approx(_central(f, X, seeded) @ direction, rel=1e-6, abs=1e-8)


def test_a_generator_argument_advances_by_one_call():
    """After grad, hessian or the self-check the generator has drawn what one call of f draws."""
    for derivative in (s2s_ad.grad(noise_from_argument), s2s_ad.grad(noise_from_argument, check=True),
                       s2s_ad.hessian(noise_from_argument), s2s_ad.jacobian(noise_from_argument)):
        rng, reference = _generator(), _generator()
        derivative(X, rng)
        noise_from_argument(X, reference)
        assert rng.bit_generator.state == reference.bit_generator.state


def test_global_draws_with_the_self_check_and_hessian():
    def seeded_global(x):
        np.random.seed(4)
        return noise_from_global_state(x)

    np.random.seed(4)
    gradient = s2s_ad.grad(noise_from_global_state, check=True)(X)
    np.testing.assert_allclose(gradient, _central(seeded_global, X, lambda: ()), rtol=1e-6, atol=1e-8)
    state = np.random.get_state()[1].copy()
    np.random.seed(4)
    hessian = s2s_ad.hessian(noise_from_global_state)(X)
    np.random.seed(4)
    reference = s2s_ad.grad(noise_from_global_state)
    expected = np.stack([_central(lambda x, i=i: (np.random.seed(4), reference(x))[1][i], X, lambda: ())
                         for i in range(3)])
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-7)
    np.random.seed(4)
    noise_from_global_state(X)
    assert (np.random.get_state()[1] == state).all()  # one call's draws, whatever the passes


def test_a_module_level_generator_is_replayed_in_hessian_and_jacobian():
    state = RNG.bit_generator.state

    def seeded_args():
        RNG.bit_generator.state = state
        return ()

    gradient = s2s_ad.grad(noise_from_module_generator)
    expected = np.stack([_central(lambda x, i=i: gradient(x)[i], X, seeded_args) for i in range(3)])
    RNG.bit_generator.state = state
    np.testing.assert_allclose(s2s_ad.hessian(noise_from_module_generator)(X), expected, rtol=1e-5, atol=1e-7)
    RNG.bit_generator.state = state
    np.testing.assert_allclose(s2s_ad.grad(noise_from_module_generator, check=True)(X),
                               _central(noise_from_module_generator, X, seeded_args), rtol=1e-6, atol=1e-8)


def test_a_generator_held_by_a_module_level_object_is_replayed():
    state = SETTINGS.rng.bit_generator.state

    def seeded_args():
        SETTINGS.rng.bit_generator.state = state
        return ()

    gradient = s2s_ad.grad(noise_from_an_object_attribute)
    expected = np.stack([_central(lambda x, i=i: gradient(x)[i], X, seeded_args) for i in range(3)])
    SETTINGS.rng.bit_generator.state = state
    np.testing.assert_allclose(s2s_ad.hessian(noise_from_an_object_attribute)(X), expected, rtol=1e-5, atol=1e-7)


def test_forward_jacobian_and_a_pullback_called_twice_replay_the_draws():
    """A vector result: the forward Jacobian takes a pass per input element; a pullback of a function
    that writes into an array runs its forward part again for the second cotangent."""
    expected = np.stack([_central(lambda x, i=i: noise_then_write(x, _generator())[i], X, lambda: ())
                         for i in range(3)])
    np.testing.assert_allclose(s2s_ad.jacobian(noise_then_write)(X, _generator()), expected, rtol=1e-6, atol=1e-8)
    _, pull = s2s_ad.vjp(noise_then_write, X, _generator())
    for row in range(3):
        unit = np.eye(3)[row]
        np.testing.assert_allclose(pull(unit)[0], expected[row], rtol=1e-6, atol=1e-8)


def test_check_grad_takes_its_differences_with_the_same_draws():
    assert s2s_ad.check_grad(noise_from_argument, X, _generator(), wrt=0).ok
    assert s2s_ad.check_grad(noise_from_global_state, X).ok


def test_a_generator_made_without_a_seed_is_refused_where_it_is_made():
    def unseeded(x):
        rng = np.random.default_rng()
        return np.sum(x * rng.normal(size=3))

    with pytest.raises(TransformError, match=r"default_rng\(\) without a seed.*give it a seed") as caught:
        s2s_ad.grad(unseeded)(X)
    assert caught.value.line is not None


def test_a_draw_whose_parameters_depend_on_the_inputs_is_refused():
    def reparameterised_wrongly(x, rng):
        return np.sum(rng.normal(loc=x))

    with pytest.raises(TransformError, match=r"random draw \.normal\(\) with an argument that depends on the inputs"):
        s2s_ad.grad(reparameterised_wrongly)(X, _generator())


def test_a_draw_method_of_your_own_class_is_its_method_not_a_draw():
    def not_a_generator(x, box):
        return np.sum(x * box.normal())

    class Box:
        def normal(self):
            return 2.0

    # an object of your class passed in is read by its class (tests/lowering/test_objects_from_outside.py): its
    # .normal() is the method Python calls, not a random draw
    np.testing.assert_allclose(s2s_ad.grad(not_a_generator)(X, Box()), np.full_like(X, 2.0), rtol=1e-15)


def test_a_cython_function_is_no_object_of_s2s_ad():
    """On Python 3.10 the ``__module__`` of a Cython function's type is a descriptor, not a string
    (``np.random.default_rng``): asking whether it is one of s2s_ad's own objects must say no, not fail
    (CI of stop 43 failed there on the draws above)."""
    from s2s_ad.frontend.callables import made_by_s2s_ad

    assert not made_by_s2s_ad(np.random.default_rng)
    assert not made_by_s2s_ad(np.random.default_rng(0).normal)
    assert made_by_s2s_ad(s2s_ad.grad(noise_made_here))
