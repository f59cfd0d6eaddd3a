"""What vector mode's rules make of an expression: ``Value``, the rewritten expression with its logical rank
and whether it carries the direction axis; ``ALL``, the slice of every direction (``t[:, i]``)."""
from __future__ import annotations

import dataclasses
from typing import Optional

from ...core import ir

ALL = ir.Slice(None, None, None)


@dataclasses.dataclass(frozen=True)
class Value:
    """A rewritten expression: its logical rank (the one-direction code's), and whether it carries the
    direction axis in front."""

    expr: ir.Expr
    rank: Optional[int]
    directed: bool
