"""Vector forward mode in typed code (``statements.vector_tangents``): a tangent function pushing a leading
axis of directions through one run, for targets that compile (``Capabilities.vector_tangents``).
``facts.py`` finds the tangents and ranks, ``expressions.py`` rewrites values for all directions at once,
``numbers.py`` a number's for one direction, ``statements.py`` the function."""
from .statements import vector_tangents

__all__ = ["vector_tangents"]
