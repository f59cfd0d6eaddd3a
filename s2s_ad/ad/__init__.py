"""Stage 4, automatic differentiation: the reverse and forward generators.

Input: an ``ir.Function`` in SSA form with its ``Analysis``.  Output: the adjoint function
(``reverse``: a primal sweep recording what the reverse sweep reads, a ``RecordingPlan`` saying
where, then the reverse sweep) or the tangent function (``forward``), as IR; each operation's
derivative comes from its rule (``rules``), assignments' and stores' adjoints from
``assignment_adjoints`` and ``store_adjoints``, the tape's layout from ``tape`` and ``plan``.
``vector`` takes a tangent function to its vector version (every tangent with a leading axis of
directions), for targets that compile the tangent code.
"""
