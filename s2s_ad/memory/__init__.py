"""The memory model: which names may share storage, and how a view is taken again.

One model in three modules: ``aliasing`` states NumPy's rules (which calls give views, how a view is
taken again and written back, which values are new objects); ``views`` applies them to a function
being lowered (every view knows its base and the steps that took it; the writes into each base
since), which lowering consults at each read and write; ``sharing`` applies them to IR, for the
reverse and forward generators, the passes and the targets (which values may be one object, which
need a copy).  Input: IR statements.  Output: answers only.  Stands on ``core`` and ``rules``.
"""
