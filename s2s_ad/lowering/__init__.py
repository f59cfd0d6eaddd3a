"""Stage 2, lowering: the front end's syntax tree to the IR in SSA form.

Input: a ``Snapshot`` from the front end.  Output: an ``ir.Function`` in SSA form: every value
bound once, loops and branches with their merge variables, writes into arrays as explicit stores
(views taken again after a write, as the memory model decides), containers and users' objects
flattened, helpers inlined or kept as calls.  ``lower`` drives; the ``lower_*`` modules each lower
one kind of construct.
"""
