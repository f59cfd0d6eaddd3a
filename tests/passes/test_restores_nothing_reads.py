"""A part of an array the forward sweep overwrote is put back in the reverse sweep only where
something reads it there: a value recorded as a number shares no memory with the array it was
read from (``sharing.Sharing.of_block`` told the analysis's numbers, ``tape.drop_unread_records``).

Oracles: central differences, and the primal's own results (a returned array is what the primal
returned).
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import s2s_ad
from conftest import module_from_source, numeric_grad


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    return module_from_source(tmp_path_factory.mktemp("restores"), "restores_program_", textwrap.dedent("""
        import numpy as np

        def pendulum(length, damping, n):
            theta = np.zeros(n + 1)
            omega = np.zeros(n + 1)
            theta[0] = 1.0
            for t in range(n):
                theta[t + 1] = theta[t] + 0.01 * omega[t]
                omega[t + 1] = omega[t] + 0.01 * (-9.81 / length * np.sin(theta[t]) - damping * omega[t])
            return np.sum(theta ** 2)

        def reads_the_array_back(a, n):
            x = np.zeros(n + 1)
            x[0] = a
            for t in range(n):
                x[t + 1] = 0.5 * np.sum(x[: t + 1]) + a * np.cos(x[t])
            return np.sum(x ** 2)

        def returns_the_array(a, n):
            x = np.zeros(n + 1)
            x[0] = a
            for t in range(n):
                x[t + 1] = np.sin(x[t]) * a
            return np.sum(x), x

        def rows(a, n):
            x = np.zeros((n + 1, 3))
            x[0] = a
            for t in range(n):
                x[t + 1] = np.sin(x[t]) * a + x[t]
            return np.sum(x ** 2)
    """))


def test_element_writes_read_back_only_as_recorded_numbers_are_not_put_back(programs):
    args = (1.2, 0.3, 200)
    df = s2s_ad.grad(programs.pendulum, wrt=(0, 1))
    source = df.source_for(*args)
    reverse = source.split("# reverse sweep")[1]
    put_back = [line for line in reverse.splitlines() if line.strip().startswith(("theta[", "omega["))]
    assert not put_back, source
    assert "old_" not in source, source  # nor recorded
    for got, i in zip(df(*args), (0, 1)):
        assert got == pytest.approx(numeric_grad(programs.pendulum, args, i), rel=1e-6)


def test_an_array_the_reverse_sweep_reads_is_put_back(programs):
    args = (0.3, 6)
    got = s2s_ad.grad(programs.reads_the_array_back, wrt=0)(*args)
    assert got == pytest.approx(numeric_grad(programs.reads_the_array_back, args, 0), rel=1e-6)


def test_a_returned_array_is_the_primals(programs):
    gradient, aux = s2s_ad.grad(programs.returns_the_array, wrt=0, has_aux=True)(0.3, 6)
    np.testing.assert_array_equal(aux, programs.returns_the_array(0.3, 6)[1])
    assert gradient == pytest.approx(numeric_grad(lambda a, n: programs.returns_the_array(a, n)[0], (0.3, 6), 0),
                                     rel=1e-6)


def test_rows_written_in_a_loop(programs):
    args = (0.4, 8)
    got = s2s_ad.grad(programs.rows, wrt=0)(*args)
    assert got == pytest.approx(numeric_grad(programs.rows, args, 0), rel=1e-6)
