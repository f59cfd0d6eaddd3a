"""Rules: what s2s_ad knows about each operation.

Input: the templates (``s2s_ad.templates``, and users' modules given to ``load_template_module``),
each an ``@adjoint`` / ``@tangent`` function with the facts it declares.  Output: the registry the
later stages consult (``registry.adjoint_rule``, ``registry.fact``), each fact checked against NumPy
by ``rule_facts`` where the tests or the debug mode ask.  Stands on ``core`` alone.

This package's face hands on the names templates and users write (``from s2s_ad.rules import
adjoint, tangent, declare``); the engine imports ``registry`` itself.
"""
from .batched_forms import batched, data_axis
from .registry import (FACTS, Rule, adjoint, compiled, declare, fresh_arrays, fresh_values, load_template_module,
                       load_templates, method_alias, nondifferentiable, spell_module, tangent, when_imported)

__all__ = ["FACTS", "Rule", "adjoint", "batched", "compiled", "data_axis", "declare", "fresh_arrays", "fresh_values",
           "load_template_module", "load_templates", "method_alias", "nondifferentiable", "spell_module", "tangent", "when_imported"]
