"""The memory model: which names may share storage, and how a view is taken again.

Input: IR statements (from lowering, or a function in SSA form).  Output: answers to the one
question every later stage asks, whether two values may share memory, and for a view its base
and the steps that take it again after a write (``aliasing``).  Consulted by lowering, the
reverse and forward generators and the targets; stands on ``core`` and ``rules``.
"""
