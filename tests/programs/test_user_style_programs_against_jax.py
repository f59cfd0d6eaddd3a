"""User-style functions written for each round (tests/corpora/round3_user_programs.py, round4_user_programs.py)
in every transform against JAX.

Each function runs through ``grad``/``value_and_grad``, ``vjp``, ``jvp``, ``hessian`` and ``grad`` of a
caller that calls it as a helper (the split form), and is compared with ``jax.grad``, ``jax.jvp`` and
``jax.hessian`` of its JAX twin (writes as ``.at[].set``).
"""
import numpy as np
import pytest

import s2s_ad
from conftest import optional_import

jax = optional_import("jax")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(jax is None, reason="JAX is not installed")]

if jax is not None:
    import jax.numpy as jnp
    import round3_user_programs
    import round4_user_programs
    CASES = round3_user_programs.CASES + round4_user_programs.CASES
else:
    CASES = []


def _close(a, b, rtol=1e-6):
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=1e-9)


@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: CASES[i][0].__name__)
def test_every_transform_against_jax(case):
    f, twin, args = CASES[case]
    jargs = tuple(jnp.asarray(a) for a in args)
    wrt = tuple(range(len(args)))
    want = jax.grad(twin, argnums=wrt)(*jargs)
    value, got = s2s_ad.value_and_grad(f, wrt=wrt)(*args)
    assert _close(value, twin(*jargs))
    got = got if len(wrt) > 1 else (got,)
    assert all(_close(a, b) for a, b in zip(got, want))
    _, pull = s2s_ad.vjp(f, *args)
    assert all(_close(a, b) for a, b in zip(pull(1.0), want))
    tangents = tuple(0.3 * np.ones_like(np.asarray(a, float)) if np.ndim(a) else 0.3 for a in args)
    _, jt = s2s_ad.jvp(f, args, tangents)
    assert _close(jt, jax.jvp(twin, jargs, tuple(jnp.asarray(t) for t in tangents))[1])
    assert _close(s2s_ad.hessian(f, wrt=0)(*args), jax.hessian(twin, argnums=0)(*jargs), rtol=1e-5)

    if len(args) == 1:
        def caller_of(a):
            return 2.0 * f(a)
    else:
        def caller_of(a, b):
            return 2.0 * f(a, b)
    through = s2s_ad.grad(caller_of, wrt=wrt)(*args)
    through = through if len(wrt) > 1 else (through,)
    assert all(_close(a, 2.0 * np.asarray(b)) for a, b in zip(through, want))
