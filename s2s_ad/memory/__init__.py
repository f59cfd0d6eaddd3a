"""The memory model: which names may share storage, and how a view is taken again.

One model in four modules: ``aliasing`` states NumPy's rules (which calls give views, how a view is
taken again and written back, which values are new objects); ``views`` applies them to a function
being lowered (every view knows its base and the steps that took it; the writes into each base
since), which lowering consults at each read and write; ``sharing`` applies them to IR, for the
reverse and forward generators, the passes and the targets (which values may be one object, which
need a copy); ``lists`` answers the same for lists, which lowering treats as values and Python as
objects (which appends of generated code no later read can tell from a new list).  Which lists may
grow while another holder has them is the front end's check (``frontend.list_sharing``), since only
the user's code says where a name takes a list.  Input: IR statements.  Output: answers only.
Stands on ``core`` and ``rules``.
"""
