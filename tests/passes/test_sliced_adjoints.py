"""An array read by several basic slices at one level adds their adjoints into one array in place.

``p[:-2, 1:-1] + p[2:, 1:-1] + ...``: each read's adjoint used to be an array of zeros shaped like
``p`` with the part written in, added to the rest; now ``d_p`` is made once and each part added
into its slice (``d_p[2:, 1:-1] += d_part``), as a hand-written adjoint does.  Checked against
finite differences, where the array's adjoint also has other contributions and where a slice's
value is passed on.
"""
import numpy as np

import s2s_ad
from conftest import assert_gradient_matches
import release_functions as rf

RNG = np.random.default_rng(5)


def test_the_slices_adjoints_are_added_in_place():
    img = RNG.normal(size=(5, 4))
    text = s2s_ad.source(rf.shifted_sum, args=(img,))
    assert "d_p[2:, 1:-1] += " in text and "getitem_grad" not in text, text
    assert_gradient_matches(rf.shifted_sum, (img,))


def test_an_array_used_whole_and_sliced():
    assert_gradient_matches(rf.sliced_and_used_whole, (RNG.normal(size=6),))


def test_a_slice_passed_on_to_other_values():
    assert_gradient_matches(rf.sliced_part_passed_on, (RNG.normal(size=5),))
    x = RNG.normal(size=5)
    out, pull = s2s_ad.vjp(rf.sliced_part_passed_on, x)
    np.testing.assert_allclose(pull(1.0)[0], pull(1.0)[0])
    np.testing.assert_allclose(pull(1.0)[0], s2s_ad.grad(rf.sliced_part_passed_on)(x), rtol=1e-12)


def test_second_derivatives_through_the_slices():
    from conftest import assert_hessian_matches_gradient_differences
    assert_hessian_matches_gradient_differences(rf.sliced_and_used_whole, (RNG.normal(size=4),))
