"""Rules for ``signal_ops``, declared the way templates/ declares NumPy's: a file
outside the engine that ``s2s_ad.rules.registry.load_template_module`` loads."""
import numpy as np
from signal_ops import reversed_rows, softplus

from s2s_ad.rules.registry import adjoint, tangent


@adjoint(softplus, elementwise=True, cheap=True, domain=(-2.0, 2.0),
         examples=({"x": ()}, {"x": (3,)}, {"x": (2, 3)}))
def softplus_rule(out, x, d_out):
    d_x = d_out / (1.0 + np.exp(-x))


@tangent(softplus, elementwise=True, domain=(-2.0, 2.0), examples=({"x": ()}, {"x": (3,)}))
def softplus_tangent(out, x, t_x):
    t_out = t_x / (1.0 + np.exp(-x))


@adjoint(reversed_rows, linear=True, view=True, examples=({"m": (3,)}, {"m": (3, 2)}))
def reversed_rows_rule(out, m, d_out):
    d_m = np.flip(d_out, axis=0)
