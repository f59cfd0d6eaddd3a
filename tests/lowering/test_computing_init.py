"""Issue 33: objects of classes whose ``__init__`` computes what it assigns, made inside the
differentiated function.  The ``__init__`` is read as a function of its arguments returning the
attributes (each ``self.a`` a local of its own) and lowered in place where the object is made.
Oracles: central differences in every mode (conftest's ``assert_every_mode``: grad, value_and_grad,
the pullback, jvp, the Hessian against differences of the gradient), the Numba backend's numbers
against Python's; what cannot be read so is refused at the line that makes the object."""
from __future__ import annotations

import numpy as np
import pytest

import computing_init_functions as ci
import s2s_ad
from conftest import assert_every_mode, assert_numba_gives_the_same_numbers

X = np.array([0.7, -1.3, 0.4, 2.1])


@pytest.mark.parametrize("f", ci.SUPPORTED, ids=lambda f: f.__name__)
def test_differentiated_in_every_mode(f):
    assert_every_mode(f, X.copy())


@pytest.mark.parametrize("f", ci.SUPPORTED, ids=lambda f: f.__name__)
def test_the_numba_backend_gives_the_same_numbers(f):
    assert_numba_gives_the_same_numbers(f, X.copy())


def test_the_value_is_what_python_computes():
    for f in ci.SUPPORTED:
        value, _ = s2s_ad.value_and_grad(f)(X.copy())
        assert value == pytest.approx(float(f(X.copy())), rel=1e-13), f.__name__


def test_the_init_is_lowered_once_per_object_in_the_generated_code():
    source = s2s_ad.grad(ci.model_with_a_default_and_len).source_for(X)
    # two objects: each attribute computed once for each, under the attribute's name
    assert source.count("= len(") == 2 and "self_n = len(" in source and "self_n_1 = len(" in source, source


def test_the_arguments_are_left_as_they_were():
    x = X.copy()
    s2s_ad.grad(ci.attribute_updated_in_init)(x)
    np.testing.assert_array_equal(x, X)


@pytest.mark.parametrize("f, words", [
    (ci.computing_init_calling_super, r"making a ComputesWithSuper object: Layer.__init__ does more than assign its "
                                      r"arguments to attributes \(line \d+: 'self.w = w \* 2.0'\)"),
    (ci.init_calling_a_method, r"making a CallsAMethod object: CallsAMethod.__init__ reads self.summed \(line \d+\), "
                               r"which it does not assign"),
    (ci.init_returning_early, r"making a ReturnsEarly object: ReturnsEarly.__init__ returns early \(line \d+\)"),
])
def test_what_cannot_be_read_is_refused_at_the_line(f, words):
    with pytest.raises(s2s_ad.TransformError, match=words) as caught:
        s2s_ad.grad(f)(X.copy())
    assert caught.value.line is not None and caught.value.line == f.__code__.co_firstlineno + 1
