"""The list of the functions that have built-in rules (docs/rules.md), generated from the registry.

``python -m s2s_ad.rule_table --markdown`` prints it.  Nothing here is per
operation: a function appears because a template declares it.
"""
from __future__ import annotations

import sys
import types
from typing import Any, Optional

from ..frontend import callables
from ..rules import registry as rules
from ..rules.rule import Rule

# Where the list looks a function up, in order: its name there is how a user writes it.
_FAMILIES = (("Python operators", "operator", "operator"), ("Python builtins", "builtins", ""),
             ("math", "math", "math"), ("NumPy", "numpy", "np"), ("numpy.linalg", "numpy.linalg", "np.linalg"),
             ("numpy.fft", "numpy.fft", "np.fft"), ("numpy.random", "numpy.random", "np.random"),
             ("scipy.linalg", "scipy.linalg", "scipy.linalg"), ("scipy.special", "scipy.special", "scipy.special"),
             ("scipy.signal", "scipy.signal", "scipy.signal"), ("scipy.stats", "scipy.stats", "scipy.stats"),
             ("scipy.integrate", "scipy.integrate", "scipy.integrate"))

# The families whose rows say, after each function, the inputs it is differentiated by (SciPy's, where a
# function's parameters, the order of a Bessel function, a distribution's shape, may have no derivative).
_WITH_INPUTS = ("scipy.special", "scipy.signal", "scipy.stats", "scipy.integrate")


def _written_name(fn: Any) -> Optional[tuple[str, str]]:
    """``(family, name as a user writes it)`` of a built-in rule's function, or None for s2s_ad's own
    helpers.  Only modules already imported are searched."""
    for family, module_name, prefix in _FAMILIES:
        module = sys.modules.get(module_name)
        name = getattr(fn, "__name__", None)
        if module is not None and name is not None and getattr(module, name, None) is fn:
            return family, f"{prefix}.{name}" if prefix else name
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):  # a distribution's method: scipy.stats.norm.pdf
        written = callables.describe_callable(fn)
        for family, module_name, _ in _FAMILIES:
            if written.startswith(module_name + ".") and "." in written[len(module_name) + 1:]:
                return family, written
    return None


def _builtin(rule: Rule) -> bool:
    """A rule of s2s_ad's own templates, not one a user registered."""
    return rule.namespace.get("__name__", "").startswith("s2s_ad.templates")


def rule_table() -> str:
    """The list of functions with built-in rules, as Markdown, from the registry.

    Per family: each function with an adjoint rule (reverse and forward mode),
    those with a tangent rule only (forward mode, marked †) and those declared
    constant (zero derivative, marked ‡); SciPy's with the inputs each is
    differentiated by.  ``python -m s2s_ad.rule_table --markdown``
    prints it; tests/rules/test_template_modules.py checks that docs/rules.md shows the same
    (between its ``<!-- rule table: begin -->`` and ``end`` markers).
    """
    rules.load_templates()
    rules.load_deferred()  # the rules of libraries imported since the templates were (scipy.linalg, scipy.special)
    rows: dict[str, dict[str, str]] = {family: {} for family, _, _ in _FAMILIES}
    inputs: dict[str, tuple[str, ...]] = {}  # function -> the inputs it is differentiated by
    for found, mark in (([r for r in rules.all_adjoint_rules() if _builtin(r)], ""),
                        ([r for r in rules.tangent_only_rules() if _builtin(r)], "†")):
        for rule in found:
            written = _written_name(rule.fn)
            if written is not None:
                rows[written[0]].setdefault(written[1], mark)
                inputs.setdefault(written[1], rule.differentiable_inputs())
    for fn in rules.constant_functions():
        written = _written_name(fn)
        if written is not None:
            rows[written[0]].setdefault(written[1], "‡")
    libraries = [marks for family, names in rows.items() if not family.startswith("Python")
                 for marks in names.values()]
    lines = [f"{len(libraries)} functions of NumPy, `math` and SciPy have built-in rules: "
             f"{libraries.count('')} with an adjoint (reverse and forward mode), "
             f"{libraries.count('†')} with a tangent only (forward mode, marked †), "
             f"{libraries.count('‡')} constants (zero derivative, marked ‡).", "",
             "| family | functions |", "| --- | --- |"]
    for family, names in rows.items():
        if names:
            listed = ", ".join(f"`{name}`{mark}" + (f" ({', '.join(inputs[name])})" if family in _WITH_INPUTS
                                                    and inputs.get(name) else "")
                               for name, mark in sorted(names.items()))
            lines.append(f"| {family} ({len(names)}) | {listed} |")
    lines += ["", "For SciPy's functions, the inputs each is differentiated by follow its name; a call where "
              "another of its inputs depends on the differentiated ones (the order of a Bessel function, the "
              "shape parameter of a distribution's `cdf`) is refused, naming that input."]
    return "\n".join(lines) + "\n"


def numba_table() -> str:
    """What compiles under ``backend="numba"``, as Markdown (imports numba): per family, the functions
    whose rule makes only calls Numba has an implementation of (its own, or s2s_ad's compiled
    versions), and the others, each with the calls that run as Python (``numba.coverage``).
    ``python -m s2s_ad.api.rule_table --numba`` prints it; tests/targets/test_numba_rule_coverage.py checks
    that docs/rules.md shows the same (between its ``<!-- numba table: begin -->`` and ``end`` markers)."""
    from ..targets.numba.coverage import missing_calls
    rows: dict[str, dict[str, tuple[str, ...]]] = {family: {} for family, _, _ in _FAMILIES}
    for fn, missing in missing_calls().items():
        written = _written_name(fn)
        if written is not None:
            rows[written[0]].setdefault(written[1], missing)
    listed = [missing for names in rows.values() for missing in names.values()]
    lines = [f"{sum(1 for m in listed if not m)} of the {len(listed)} functions with an adjoint rule compile "
             "under `backend=\"numba\"`; the others make calls Numba has no implementation of (named after each), "
             "and a function calling them runs as Python, said by a `CompileFallbackWarning`.", "",
             "| family | compiles | runs as Python (the calls Numba lacks) |", "| --- | --- | --- |"]
    for family, names in rows.items():
        if names:
            compiles = ", ".join(f"`{name}`" for name, missing in sorted(names.items()) if not missing) or "-"
            not_yet = ", ".join(f"`{name}` ({', '.join(missing)})" for name, missing in sorted(names.items())
                                if missing) or "-"
            lines.append(f"| {family} | {compiles} | {not_yet} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m s2s_ad.rule_table",
                                     description="List the functions that have built-in rules.")
    parser.add_argument("--markdown", action="store_true", help="as the Markdown table of docs/rules.md")
    parser.add_argument("--numba", action="store_true", help="what compiles under backend='numba' (imports numba)")
    numba_only = parser.parse_args().numba
    try:  # the list has SciPy's rules too, which register once it is imported
        import scipy.linalg  # noqa: F401
        import scipy.signal  # noqa: F401
        import scipy.special  # noqa: F401
        import scipy.stats  # noqa: F401
        import scipy.integrate  # noqa: F401
    except ImportError:
        pass
    sys.stdout.write(numba_table() if numba_only else rule_table())
