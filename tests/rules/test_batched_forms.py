"""Vector mode through every built-in rule (issue 34): each rule's examples (the calls
``tests/rules/test_rules.py``'s ``Probe`` writes) swept with three directions at once, forward
(``batched_sweep`` of the tangent code) and reverse (``vjp_fn(..., batched=True)``).

Oracle: the same generated code run one direction at a time.  A sweep either equals it or is refused
(one sweep per direction then); the rules refused are listed here, so that a rule added without a
batched form, or one that loses its form, fails this test until it is batched (``rules.batched``
beside its template, docs/api.md) or listed with the reason it is not."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import batched as batched_module
from s2s_ad.api.gradient import _tangent_function
from s2s_ad.rules import registry as rules
from s2s_ad.rules.rule_facts import examples_of
from test_rules import Probe

COUNT = 3

# Rules whose examples a batched forward sweep still refuses, by the label ``_label`` gives, with how many
# of their examples it refuses (a function batched in everyday use may refuse an option, np.sum's where=):
# each runs one tangent sweep per direction.  Mostly linear algebra, statistics, signal processing and the
# SciPy rules, whose helpers have no batched form yet (np.einsum, np.outer, np.inner, np.vdot, np.kron
# and np.tensordot sweep batched: their tangents are linear in one operand, targets/batched/rules.py).
FORWARD_UNBATCHED: dict[str, int] = {
    "builtins.sorted": 1, "builtins.sum": 2, "numpy.add.accumulate": 4, "numpy.add.reduce": 6, "numpy.append": 3,
    "numpy.array_split": 3, "numpy.asanyarray": 4, "numpy.atleast_1d": 2, "numpy.atleast_2d": 2,
    "numpy.atleast_3d": 2, "numpy.average": 5, "numpy.column_stack": 3, "numpy.concatenate": 3,
    "numpy.convolve": 10, "numpy.corrcoef": 4, "numpy.correlate": 10, "numpy.cov": 7, "numpy.cross": 8,
    "numpy.diff": 3, "numpy.dsplit": 2, "numpy.dstack": 3, "numpy.ediff1d": 5,
    "numpy.fft.fftshift": 5, "numpy.fft.ifftshift": 5, "numpy.float64": 2, "numpy.gradient": 8,
    "numpy.hsplit": 3, "numpy.hstack": 4, "numpy.interp": 5, "numpy.linalg.cholesky": 5, "numpy.linalg.eigh": 5, "numpy.linalg.eigvalsh": 5, "numpy.linalg.matrix_power": 4, "numpy.linalg.multi_dot": 4, "numpy.linalg.pinv": 6, "numpy.linalg.qr": 3,
    "numpy.linalg.slogdet": 2, "numpy.linalg.svd": 11, "numpy.median": 4, "numpy.meshgrid": 6, "numpy.pad": 19, "numpy.percentile": 6, "numpy.polyval": 6, "numpy.quantile": 10, "numpy.real": 3, "numpy.real_if_close": 2, "numpy.rollaxis": 5, "numpy.rot90": 2,
    "numpy.split": 4, "numpy.stack": 2, "numpy.trapezoid": 7,
    "numpy.vsplit": 2, "numpy.vstack": 4, "s2s_ad.core.runtime.added_at": 2,
    "s2s_ad.core.runtime.adjoints_added": 2, "s2s_ad.core.runtime.held_apart": 2, "s2s_ad.core.runtime.item": 3,
    "s2s_ad.core.runtime.list_append": 2, "s2s_ad.core.runtime.list_with": 2,
    "s2s_ad.core.runtime.list_without": 2,
    "s2s_ad.core.runtime.positions_grad": 2, "s2s_ad.core.runtime.retaken_view": 2,
    "s2s_ad.core.runtime.stale_grad": 2, "s2s_ad.core.runtime.stored_part": 2,
    "s2s_ad.templates.numpy_creation.astype": 3, "s2s_ad.templates.numpy_creation.cast_derivative": 2,
    "s2s_ad.templates.numpy_index_tricks.columns_joined": 4, "s2s_ad.templates.numpy_index_tricks.index_joined": 8,
    "s2s_ad.templates.numpy_index_tricks.index_joined_grad": 2,
    "s2s_ad.templates.numpy_index_tricks.rows_joined": 4, "s2s_ad.templates.numpy_linalg.cross_grad": 3,
    "s2s_ad.templates.numpy_linalg.det_cofactors": 7, "s2s_ad.templates.numpy_linalg.dot_grad_a": 1,
    "s2s_ad.templates.numpy_linalg.dot_grad_b": 1, "s2s_ad.templates.numpy_linalg.einsum_grad": 2,
    "s2s_ad.templates.numpy_linalg.kron_blocks": 1,
    "s2s_ad.templates.numpy_linalg.kron_spread": 2, "s2s_ad.templates.numpy_linalg.matrix_power_grad": 1,
    "s2s_ad.templates.numpy_linalg.multi_dot_grad": 2, "s2s_ad.templates.numpy_linalg.norm_matrices": 3,
    "s2s_ad.templates.numpy_linalg.norm_unmoved": 3, "s2s_ad.templates.numpy_linalg.norm_weight": 4,
    "s2s_ad.templates.numpy_linalg.qr_checked": 2, "s2s_ad.templates.numpy_linalg.svd_checked": 2, "s2s_ad.templates.numpy_linalg.zero_safe_product": 2,
    "s2s_ad.templates.numpy_reductions.average_weights": 2, "s2s_ad.templates.numpy_reductions.cumprod_grad": 2,
    "s2s_ad.templates.numpy_reductions.expand_quantiles": 2, "s2s_ad.templates.numpy_reductions.prod_others": 3,
    "s2s_ad.templates.numpy_reductions.quantile_linear": 1,
    "s2s_ad.templates.numpy_reductions.quantile_scatter": 1, "s2s_ad.templates.numpy_reductions.quantile_slope": 1,
    "s2s_ad.templates.numpy_shape.append_grad": 1, "s2s_ad.templates.numpy_shape.gradient_grad": 3,
    "s2s_ad.templates.numpy_shape.pad_grad": 5, "s2s_ad.templates.numpy_shape.pad_jvp": 4,
    "s2s_ad.templates.numpy_signal.gather": 3, "s2s_ad.templates.numpy_signal.pair_means": 2,
    "s2s_ad.templates.numpy_signal.pair_means_transpose": 2, "s2s_ad.templates.numpy_signal.scatter": 2,
    "s2s_ad.templates.operators.add_adjoint": 2, "s2s_ad.templates.operators.mul_adjoint": 2,
    "s2s_ad.templates.operators.mul_adjoint_cross": 1, "s2s_ad.templates.operators.mul_tangent": 1,
    "s2s_ad.templates.operators.mul_tangent_cross": 1, "s2s_ad.templates.operators.pair_sum": 1,
    "s2s_ad.templates.operators.tangent_sum": 1, "s2s_ad.templates.python_data.sum_items_adjoint": 2,
    "s2s_ad.templates.scipy_integrate.ode_pull_args": 1, "s2s_ad.templates.scipy_integrate.ode_pull_y0": 1,
    "s2s_ad.templates.scipy_integrate.ode_push": 1, "s2s_ad.templates.scipy_integrate.ode_sensitivity": 1,
    "scipy.integrate._odepack_py.odeint": 3, "scipy.linalg._basic.solve_banded": 9,
    "scipy.linalg._decomp_lu.lu": 10, "scipy.linalg._solvers.solve_sylvester": 5,
    "scipy.signal._signaltools.convolve": 15, "scipy.signal._signaltools.correlate": 15,
    "scipy.stats._multivariate.dirichlet_gen.logpdf": 4, "scipy.stats._multivariate.dirichlet_gen.pdf": 4,
    "scipy.stats._multivariate.multivariate_normal_gen.entropy": 4,
    "scipy.stats._multivariate.multivariate_normal_gen.logpdf": 8,
    "scipy.stats._multivariate.multivariate_normal_gen.pdf": 8,
}
# Likewise for a batched reverse sweep (one pullback per direction).
REVERSE_UNBATCHED: dict[str, int] = {
    "builtins.sum": 6, "s2s_ad.core.runtime.list_without": 1, "numpy.append": 3, "numpy.concatenate": 3, "numpy.convolve": 10, "numpy.corrcoef": 4,
    "numpy.correlate": 10, "numpy.cov": 7, "numpy.cross": 8, "numpy.dot": 6,
    "numpy.einsum": 11, "numpy.fft.fftshift": 5, "numpy.fft.ifftshift": 5, "numpy.gradient": 6, "numpy.interp": 5, "numpy.kron": 3, "numpy.linalg.cholesky": 5, "numpy.linalg.eigvalsh": 5,
    "numpy.linalg.matrix_power": 4, "numpy.linalg.multi_dot": 4, "numpy.linalg.pinv": 6,
    "numpy.linalg.svd": 6, "numpy.matmul": 1, "numpy.median": 4,
    "numpy.meshgrid": 1, "numpy.pad": 19,
    "numpy.percentile": 6, "numpy.quantile": 10, "numpy.rot90": 2, "numpy.stack": 2,
    "numpy.trapezoid": 7, "operator.matmul": 1,
    "s2s_ad.core.runtime.positions_grad": 2, "s2s_ad.core.runtime.retaken_view": 2,
    "s2s_ad.core.runtime.stale_grad": 2, "s2s_ad.templates.numpy_creation.astype": 3,
    "s2s_ad.templates.numpy_creation.cast_derivative": 2, "s2s_ad.templates.numpy_index_tricks.columns_joined": 4,
    "s2s_ad.templates.numpy_index_tricks.index_joined": 8, "s2s_ad.templates.numpy_index_tricks.rows_joined": 4,
    "s2s_ad.templates.numpy_linalg.norm_matrices": 3, "s2s_ad.templates.numpy_linalg.norm_unmoved": 3,
    "s2s_ad.templates.numpy_shape.gradient_grad": 3, "s2s_ad.templates.numpy_shape.pad_grad": 5,
    "s2s_ad.templates.numpy_shape.pad_jvp": 4, "s2s_ad.templates.numpy_signal.gather": 3,
    "s2s_ad.templates.numpy_signal.pair_means": 2, "s2s_ad.templates.numpy_signal.pair_means_transpose": 2,
    "s2s_ad.templates.numpy_signal.scatter": 2, "scipy.integrate._odepack_py.odeint": 3,
    "scipy.linalg._basic.solve_banded": 9, "scipy.linalg._solvers.solve_sylvester": 5,
    "scipy.signal._signaltools.convolve": 15, "scipy.signal._signaltools.correlate": 15,
    "scipy.stats._multivariate.dirichlet_gen.logpdf": 2, "scipy.stats._multivariate.dirichlet_gen.pdf": 2,
    "scipy.stats._multivariate.multivariate_normal_gen.entropy": 4,
    "scipy.stats._multivariate.multivariate_normal_gen.logpdf": 8,
    "scipy.stats._multivariate.multivariate_normal_gen.pdf": 8,
}


def _label(rule: rules.Rule) -> str:
    fn = rule.fn
    module = getattr(fn, "__module__", None)
    if module is None and hasattr(fn, "__self__"):  # np.add.accumulate
        return f"numpy.{fn.__self__.__name__}.{fn.__name__}"
    if isinstance(fn, np.ufunc):  # (a ufunc's __module__ is None before NumPy 2)
        return f"numpy.{fn.__name__}"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", rule.name)
    label = f"{module}.{name}".replace("numpy.linalg._linalg", "numpy.linalg").replace("_operator", "operator")
    return "numpy.trapezoid" if label == "numpy.trapz" else label  # (its name before NumPy 2)


def _built_in(rule: rules.Rule) -> bool:
    return rule.namespace.get("__name__", "").startswith("s2s_ad.templates")


def _probes(kinds: tuple[str, ...]) -> list[tuple[str, Probe]]:
    folder = Path(tempfile.mkdtemp(prefix="batched_forms_"))
    found, seen = [], set()
    for rule in rules.all_rules():
        if rule.kind not in kinds or not _built_in(rule):
            continue
        for i, example in enumerate(examples_of(rule, rules.declared_examples(rule))):
            if (_label(rule), i) in seen:
                continue
            seen.add((_label(rule), i))
            try:
                probe = Probe(rule, example, folder)
            except Exception:  # (an example Probe cannot write as a call: the dot-product test says so)
                continue
            if probe.args:
                found.append((_label(rule), probe))
    return found


def _directions(value: Any, rng: np.random.Generator) -> Any:
    if isinstance(value, (tuple, list)):
        items = [_directions(v, rng) for v in value]
        return value._make(items) if hasattr(value, "_make") else type(value)(items)
    return rng.normal(size=(COUNT,) + np.shape(value))


def _direction(value: Any, d: int) -> Any:
    if isinstance(value, (tuple, list)):
        items = [_direction(v, d) for v in value]
        return value._make(items) if hasattr(value, "_make") else type(value)(items)
    return value[d]


def _assert_close(batched: Any, each: list, where: str) -> None:
    for d, one in enumerate(each):
        for got, want in zip(_leaves(_direction(batched, d)), _leaves(one)):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=where)


def _leaves(value: Any) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def test_every_rule_sweeps_forward_batched_or_is_listed():
    rng = np.random.default_rng(34)
    refused, walked, wrong = {}, set(), []
    for label, probe in _probes(("adjoint", "tangent")):
        walked.add(label)
        args = tuple(probe.args)
        code = _tangent_function(probe.module.call, tuple(f"p{i}" for i in range(len(args))), args)
        tangents = tuple(rng.normal(size=(COUNT,) + np.shape(a)) for a in args)
        swept = batched_module.batched_sweep(code, args, tangents, COUNT)
        if swept is None:
            refused[label] = refused.get(label, 0) + 1
            continue
        try:
            _assert_close(swept[1], [code(*args, *(t[d] for t in tangents))[1] for d in range(COUNT)],
                          f"{label}: {probe.call_source}")
        except AssertionError as error:
            wrong.append(str(error))
    assert not wrong, "\n".join(wrong)
    _assert_listed(refused, walked, FORWARD_UNBATCHED, "FORWARD_UNBATCHED")


def test_every_rule_pulls_back_batched_or_is_listed():
    rng = np.random.default_rng(43)
    refused, walked, wrong = {}, set(), []
    for label, probe in _probes(("adjoint",)):
        walked.add(label)
        value, vjp_fn = s2s_ad.vjp(probe.module.call, *probe.args)
        cotangents = _directions(value, rng)
        batched = vjp_fn(cotangents, batched=True)
        if not vjp_fn._batches:
            refused[label] = refused.get(label, 0) + 1
            continue
        try:
            _assert_close(batched, [vjp_fn(_direction(cotangents, d)) for d in range(COUNT)],
                          f"{label}: {probe.call_source}")
        except AssertionError as error:
            wrong.append(str(error))
    assert not wrong, "\n".join(wrong)
    _assert_listed(refused, walked, REVERSE_UNBATCHED, "REVERSE_UNBATCHED")


def _assert_listed(refused: dict, walked: set, listed: dict, name: str) -> None:
    """The rules refused are those listed (of those walked: SciPy's where SciPy is installed), with as many
    examples refused each."""
    known = {label: n for label, n in listed.items() if label in walked}
    # (at most as many: an older NumPy may build fewer of a rule's examples, np.linalg.cholesky's on 1.23)
    new = {label: n for label, n in refused.items() if n > known.get(label, 0)}
    assert not new, (f"refused by a batched sweep (give a batched form beside the rule, rules.batched, or list "
                     f"it in {name}): {new}")
    gone = {label: n for label, n in known.items() if label not in refused}
    # (the lists were taken on NumPy 2; on 1.x np.linalg.slogdet's examples sweep batched: nothing to take off)
    if int(np.__version__.split(".")[0]) >= 2:
        assert not gone, f"batched now, take off {name}: {gone}"
