"""Compiled draws from a NumPy ``Generator`` passed in: the numbers NumPy's own methods give.

Input: calls ``runtime.draw(generator, "method", *args)`` in generated code, their keywords passed
by position (the pass ``draws_by_position``, which the Numba target names).  Output, once
``register`` ran: a Numba implementation of ``runtime.draw`` for a ``np.random.Generator``
argument and a method of ``REPRODUCED`` called with numbers for its distribution's parameters and
an integer, a tuple of integers or None for ``size``.  Numba's ``Generator`` draws through the
object's own bit generator, so the caller's generator advances as it does in Python, and the
replays of a derivative taken in several passes (``core.draws``) put back the state it reads.

Any other draw (a ``RandomState`` or ``random.Random``, an array of parameters, ``dtype=``, a method
not listed) has no implementation here: Numba refuses the call by name and the function runs as
Python, saying so.  ``REPRODUCED`` lists the methods whose compiled numbers equal NumPy's bit for
bit (each is checked in ``tests/targets/test_numba_draws.py``, over the regimes where NumPy's
algorithm branches); ``weibull`` and ``wald`` are left out: Numba's differ in the last bit.
"""
from __future__ import annotations

from typing import Any

from ...core import runtime

# method -> how many distribution parameters come before ``size``
REPRODUCED: dict[str, int] = {
    "random": 0, "standard_normal": 0, "standard_exponential": 0, "standard_cauchy": 0,
    "normal": 2, "uniform": 2, "integers": 2, "lognormal": 2, "laplace": 2, "logistic": 2,
    "exponential": 1, "rayleigh": 1, "poisson": 1, "geometric": 1, "chisquare": 1, "standard_t": 1,
    "standard_gamma": 1, "pareto": 1, "power": 1, "logseries": 1, "zipf": 1,
    "gamma": 2, "beta": 2, "binomial": 2, "negative_binomial": 2, "f": 2, "noncentral_chisquare": 2,
    "triangular": 3, "noncentral_f": 3,
}

# One implementation per method: Numba calls a method of a Generator it types by its name only.
_IMPLEMENTATIONS: dict[str, Any] = {
    "random": lambda generator, method, *args: generator.random(*args),
    "standard_normal": lambda generator, method, *args: generator.standard_normal(*args),
    "standard_exponential": lambda generator, method, *args: generator.standard_exponential(*args),
    "standard_cauchy": lambda generator, method, *args: generator.standard_cauchy(*args),
    "normal": lambda generator, method, *args: generator.normal(*args),
    "uniform": lambda generator, method, *args: generator.uniform(*args),
    "integers": lambda generator, method, *args: generator.integers(*args),
    "lognormal": lambda generator, method, *args: generator.lognormal(*args),
    "laplace": lambda generator, method, *args: generator.laplace(*args),
    "logistic": lambda generator, method, *args: generator.logistic(*args),
    "exponential": lambda generator, method, *args: generator.exponential(*args),
    "rayleigh": lambda generator, method, *args: generator.rayleigh(*args),
    "poisson": lambda generator, method, *args: generator.poisson(*args),
    "geometric": lambda generator, method, *args: generator.geometric(*args),
    "chisquare": lambda generator, method, *args: generator.chisquare(*args),
    "standard_t": lambda generator, method, *args: generator.standard_t(*args),
    "standard_gamma": lambda generator, method, *args: generator.standard_gamma(*args),
    "pareto": lambda generator, method, *args: generator.pareto(*args),
    "power": lambda generator, method, *args: generator.power(*args),
    "logseries": lambda generator, method, *args: generator.logseries(*args),
    "zipf": lambda generator, method, *args: generator.zipf(*args),
    "gamma": lambda generator, method, *args: generator.gamma(*args),
    "beta": lambda generator, method, *args: generator.beta(*args),
    "binomial": lambda generator, method, *args: generator.binomial(*args),
    "negative_binomial": lambda generator, method, *args: generator.negative_binomial(*args),
    "f": lambda generator, method, *args: generator.f(*args),
    "noncentral_chisquare": lambda generator, method, *args: generator.noncentral_chisquare(*args),
    "triangular": lambda generator, method, *args: generator.triangular(*args),
    "noncentral_f": lambda generator, method, *args: generator.noncentral_f(*args),
}
assert set(_IMPLEMENTATIONS) == set(REPRODUCED)


def register(overload: Any, types: Any) -> None:
    """Declare the implementation of ``runtime.draw`` (``overload``: Numba's, with the runtime's options)."""
    def is_number(t: Any) -> bool:
        return isinstance(t, (types.Float, types.Integer, types.Boolean))

    def is_size(t: Any) -> bool:
        return isinstance(t, (types.Integer, types.NoneType, types.Omitted)) or (
            isinstance(t, types.BaseTuple) and all(isinstance(item, types.Integer) for item in t))

    def typed(generator, method, *args):  # type: ignore[no-untyped-def]
        if not isinstance(generator, types.NumPyRandomGeneratorType) or \
                not isinstance(method, types.StringLiteral) or method.literal_value not in REPRODUCED:
            return None
        arity = REPRODUCED[method.literal_value]
        if len(args) > arity + 1 or not all(is_number(t) for t in args[:arity]) or \
                (len(args) == arity + 1 and not is_size(args[arity])):
            return None
        return _IMPLEMENTATIONS[method.literal_value]

    overload(runtime.draw)(typed)
