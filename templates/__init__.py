"""Derivative rules, written as Python templates (installed as ``s2s_ad.templates``).

Each module groups the rules of one family; every module here is loaded by
``s2s_ad.rules.load_templates``.  Adding a function means adding a template to
the right module: the transformer needs no change.
(A target's compiled versions of these helpers live with it: s2s_ad/targets/numba_rules/ for Numba.)
"""
