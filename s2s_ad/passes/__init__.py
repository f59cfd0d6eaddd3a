"""Optimisation passes: each a named transformation of an IR function, declared in
``driver.pass_manager`` with what it reads and what must run before it.

Input and output of each: an ``ir.Function`` in the form its entry in the pass manager states
(SSA form, or an adjoint's primal and reverse sweep), with the same meaning.  Targets choose the
passes they want by name; none is imported by a target.
"""
