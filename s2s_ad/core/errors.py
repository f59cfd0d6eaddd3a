"""The one exception users see: ``TransformError``.

Every refusal names the user's file, line and column, the construct, and
what to write instead, so no internal traceback reaches the user.  A
function defined in a Jupyter cell is named by its cell, as IPython's own
tracebacks name it (``Cell In[3], line 2``): the file name the kernel
compiled the cell under is a temporary path nobody can open (``place``).
"""
from __future__ import annotations

import sys
from typing import Optional


def cell_label(filename: Optional[str]) -> Optional[str]:
    """``Cell In[3]`` for a file name IPython (a Jupyter kernel, the IPython shell) compiled a cell
    under, as its tracebacks name it; None for any other file, or where IPython does not run (it is
    not imported here: only asked where the program imported it)."""
    ipython = sys.modules.get("IPython")
    if ipython is None or not filename:
        return None
    try:
        shell = ipython.get_ipython()
        label = shell.compile.format_code_name(filename) if shell is not None else None
    except AttributeError:  # an IPython before 8, or one half imported: the file name will do
        return None
    return " ".join(label) if isinstance(label, tuple) and all(isinstance(p, str) for p in label) else None


def place(filename: Optional[str], line: Optional[int], column: Optional[int] = None) -> str:
    """Where, as the user knows it: ``file:line:column``, or ``Cell In[3], line 2, column 5`` for a
    Jupyter cell."""
    label = cell_label(filename)
    if label is not None:
        return label + (f", line {line}" if line is not None else "") + (
            f", column {column}" if line is not None and column is not None else "")
    where = filename or "<unknown file>"
    if line is not None:
        where += f":{line}"
        if column is not None:
            where += f":{column}"
    return where


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
        text = f"{place(self.filename, self.line, self.column)}: cannot differentiate {self.construct}"
        if self.hint:
            text += f": {self.hint}"
        return text

    def located(self, filename: str, line: Optional[int], column: Optional[int]) -> "TransformError":
        """Return a copy that names the given place, unless one is named already."""
        if self.line is not None:
            return self
        return TransformError(self.construct, self.hint, filename=filename, line=line, column=column)


class NotADef(TransformError, TypeError):
    """Raised where the API is given a callable whose source cannot be read (``grad(np.sin)``): a
    ``TransformError`` and, as JAX raises for what it cannot take, a ``TypeError``; it names no place,
    for there is no line of the user's to name."""

    def _message(self) -> str:
        return f"cannot differentiate {self.construct}: {self.hint}" if self.hint else \
            f"cannot differentiate {self.construct}"


class GradientCheckError(Exception):
    """Raised by ``grad(f, check=True)`` (or ``S2S_AD_CHECK=1``) when forward and reverse
    mode disagree: one of them, or a rule one of them used, is wrong.

    ``function`` names the differentiated function (and its file and line); ``forward``
    and ``reverse`` are what the two modes gave, ``difference`` their gap and ``tolerance``
    what was allowed.  ``what`` is "derivative" (along a random direction) or "value".
    """

    def __init__(self, function: str, forward: float, reverse: float, tolerance: float,
                 what: str = "derivative") -> None:
        self.function = function
        self.forward = forward
        self.reverse = reverse
        self.difference = abs(forward - reverse)
        self.tolerance = tolerance
        self.what = what
        compared = ("the derivative along a random direction: forward mode gives {f!r}, the reverse-mode "
                    "gradient gives {r!r}" if what == "derivative" else
                    "the function's value: forward mode gives {f!r}, reverse mode {r!r}").format(f=forward, r=reverse)
        super().__init__(
            f"{function}: the gradient failed its self-check on {compared}, a difference of "
            f"{self.difference:.3g} (allowed: {tolerance:.3g}). A rule declared with @s2s_ad.adjoint or "
            f"@s2s_ad.tangent for a function called here may be wrong; s2s_ad.check_grad(f, *args) compares "
            f"the gradient with finite differences. If no rule of yours is involved, this is a bug in s2s_ad: "
            f"please report it with the function.")


class CompileFallbackWarning(UserWarning):
    """``backend="numba"`` could not compile a derivative (what Numba refused and the user's line are
    in the message): the same generated code runs as Python, giving the same numbers."""


class CacheDirectoryWarning(UserWarning):
    """The disk cache of ``backend="numba"`` is in a directory another user owns or others could
    write to (Numba loads pickled machine code from it): it is not used, and compiled code is kept in
    memory only (the message names the directory and what to do; ``targets/numba/cache_safety.py``)."""


class ExportError(Exception):
    """Raised by ``s2s-ad export`` (``export.py``) where the generated code cannot be written as a
    module that runs without s2s_ad: it names the helper or value that cannot be written, and
    nothing is written."""
