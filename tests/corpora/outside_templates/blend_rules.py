"""Rules and facts for ``blend_ops.smooth_max``, written as a file of templates/ is: dropped
into the templates package (or loaded with ``s2s_ad.rules.registry.load_template_module``), it teaches
s2s_ad the operation with no change to the engine."""
import numpy as np
from blend_ops import smooth_max

from s2s_ad.rules.registry import adjoint, tangent


@adjoint(smooth_max, elementwise=True, cheap=True, words=("smax", "blend"), domain=(-2.0, 2.0),
         examples=({"a": (), "b": ()}, {"a": (3,), "b": (3,)}, {"a": (2, 3), "b": (3,)}))
def smooth_max_rule(out, a, b, d_out):
    d_a = d_out * np.exp(a - out)  # the softmax weight of a
    d_b = d_out * np.exp(b - out)


@tangent(smooth_max, elementwise=True, domain=(-2.0, 2.0), examples=({"a": (), "b": ()}, {"a": (3,), "b": (3,)}))
def smooth_max_tangent(out, a, b, t_a, t_b):
    t_out = t_a * np.exp(a - out) + t_b * np.exp(b - out)
