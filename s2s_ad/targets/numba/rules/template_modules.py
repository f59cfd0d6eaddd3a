"""The template modules whose helpers the modules of ``numba.rules`` compile.

Input: a template module's name.  Output: the module ``s2s_ad.templates.<name>``, the rules loaded
first.  A module of its own, not the package's ``__init__.py``, which imports the modules that use it.
"""
from __future__ import annotations

import importlib
import types

from ....rules import registry


def template(name: str) -> types.ModuleType:
    """The template module ``s2s_ad.templates.<name>`` (installed, or in a source checkout loaded by the
    rule registry), whose helpers a module here compiles."""
    registry.load_templates()
    return importlib.import_module(f"s2s_ad.templates.{name}")
