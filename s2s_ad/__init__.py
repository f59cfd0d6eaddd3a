"""s2s_ad: source-to-source automatic differentiation for Python and NumPy.

``grad(f)`` reads ``f``'s source and returns a gradient function that is
itself readable Python (``grad(f).source``).  The public contract is docs/api.md.
"""
from .api.gradient import GradientFunction
from .api.forward_mode import jvp
from .api.transforms import grad, source, value_and_grad
from .api.pullback import vjp
from .api.gradcheck import GradCheck, check_grad
from .api.matrices import hessian, jacobian
from .api.sparse import hessian_sparsity, jacobian_sparsity
from .api import dynamics as _dynamics  # registers the provider of rules/function_derivatives.py
from .core.errors import CacheDirectoryWarning, CompileFallbackWarning, GradientCheckError, TransformError
from .rules.registry import adjoint, tangent
from .core.runtime import checkpointed, fixed_point, stop_gradient
from .core.version import __version__

__all__ = [
    "CacheDirectoryWarning", "CompileFallbackWarning", "GradCheck", "GradientCheckError", "GradientFunction",
    "TransformError", "adjoint", "check_grad", "checkpointed", "fixed_point", "grad", "hessian", "hessian_sparsity",
    "jacobian", "jacobian_sparsity", "jvp", "source", "stop_gradient", "tangent", "value_and_grad", "vjp",
]
