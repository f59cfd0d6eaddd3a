"""Vector forward mode in typed code (``statements.vector_tangents``): a tangent function pushing a leading
axis of directions through one run, for targets that compile (``Capabilities.vector_tangents``).
``facts.py`` finds the tangents and ranks, ``expressions.py`` rewrites values, ``statements.py`` the
function."""
from .statements import vector_tangents

__all__ = ["vector_tangents"]
