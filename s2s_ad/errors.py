"""The one exception users see: ``TransformError``.

Every refusal names the user's file, line and column, the construct, and
what to write instead, so no internal traceback reaches the user.
"""
from __future__ import annotations

from typing import Optional


class TransformError(Exception):
    """Raised when a function cannot be differentiated as written."""

    def __init__(
        self,
        construct: str,
        hint: str = "",
        *,
        filename: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        self.construct = construct
        self.hint = hint
        self.filename = filename
        self.line = line
        self.column = column
        super().__init__(self._message())

    def _message(self) -> str:
        where = self.filename or "<unknown file>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: cannot differentiate {self.construct}"
        if self.hint:
            text += f": {self.hint}"
        return text

    def located(self, filename: str, line: Optional[int], column: Optional[int]) -> "TransformError":
        """Return a copy that names the given place, unless one is named already."""
        if self.line is not None:
            return self
        return TransformError(self.construct, self.hint, filename=filename, line=line, column=column)
