"""Issue 33, round 8 (tests/corpora/object_round8_functions.py): lists of objects of the user's class
built by a list comprehension or by append in a loop whose length is known while transforming (a tuple
or list display, a parameter given one, zip and enumerate of such, range with constant bounds), in the
function itself and in ``__init__``.  Each in every mode on the Python backend against central
differences (grad, jvp, value_and_grad, vjp, the Hessian against differences of the function), on the
Numba backend grad, jvp and the Hessian against differences of the function; a loop whose length is
not known is refused at the append's line, before anything runs."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import object_round8_functions as orf
import s2s_ad
from conftest import assert_every_mode, numeric_grad, second_differences, assert_numba_agrees_with_differences

X = np.array([0.6, -1.1, 0.9])

CASES = [
    orf.comprehension_in_the_function,
    orf.appended_in_init,
    orf.comprehension_in_init,
    orf.zip_of_weights_and_biases,
    orf.over_a_constant_range,
    orf.enumerated,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    assert_every_mode(f, X.copy())
    np.testing.assert_allclose(s2s_ad.hessian(f)(X.copy()), second_differences(f, X.copy()), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_numba_backend_grad_jvp_and_hessian_agree_with_differences(f):
    assert_numba_agrees_with_differences(f, X.copy())


def test_comprehension_of_objects_matches_closed_form():
    # h1 = tanh(x0 x), h2 = tanh(x1 h1), h3 = tanh(0.5 h2): the chain rule by hand
    x = X.copy()
    h1 = np.tanh(x[0] * x)
    h2 = np.tanh(x[1] * h1)
    d3 = 0.5 * (1 - np.tanh(0.5 * h2) ** 2)  # d sum(h3) / d h2
    d2 = d3 * (1 - h2 ** 2)  # through h2 = tanh(x1 h1)
    dh1 = d2 * x[1]
    d1 = dh1 * (1 - h1 ** 2)
    want = d1 * x[0]
    want[0] += np.sum(d1 * x)
    want[1] += np.sum(d2 * h1)
    for f in (orf.comprehension_in_the_function, orf.appended_in_init, orf.comprehension_in_init):
        np.testing.assert_allclose(s2s_ad.grad(f)(x), want, rtol=1e-12)


@pytest.mark.parametrize("f, marker", [(orf.appended_over_an_array, "layers.append(Layer(w))"),
                                       (orf.comprehension_over_an_array, "layers = [Layer(w) for w in x]")])
def test_a_loop_of_unknown_length_is_refused_at_its_line(f, marker):
    lines = pathlib.Path(orf.__file__).read_text().splitlines()
    start = next(i for i, text in enumerate(lines, 1) if text.startswith(f"def {f.__name__}("))
    line = next(i for i, text in enumerate(lines, 1) if marker in text and i > start)
    with pytest.raises(s2s_ad.TransformError) as refused:
        s2s_ad.grad(f)(X.copy())
    message = str(refused.value)
    assert f"object_round8_functions.py:{line}" in message
    assert "length is not known while transforming" in message and "explicit list" in message


def test_lists_of_objects_made_in_each_step_of_a_loop_run_as_a_loop():
    f = orf.made_in_a_loop_run_as_a_loop
    np.testing.assert_allclose(s2s_ad.grad(f)(X.copy(), 3), numeric_grad(f, (X.copy(), 3), 0), rtol=1e-6,
                               atol=1e-8)
