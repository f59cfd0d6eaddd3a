"""Stage 1, the front end: from the user's function object to its checked syntax tree.

Input: a Python function (its source read back, the module it lives in, its closure).  Output: a
``Snapshot`` of its parsed, desugared ``gast`` tree (``parse``), long ``elif`` chains flattened
(``chains``), the helpers it calls found and inlined where they can be (``inline``, ``callables``,
``calls``' decisions made by ``conversion`` and ``static_names``), users' classes read
(``user_classes``), lists that would grow while another name holds them refused (``list_sharing``).
What the front end cannot read is a ``TransformError`` naming the line.
"""
