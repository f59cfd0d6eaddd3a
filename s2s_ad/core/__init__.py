"""The core: the IR every stage reads and writes, and what every stage shares.

``ir`` (statements and expressions, each statement with its line and origin), ``kinds`` (what a
value is: a number, an array of known rank, a container), ``errors`` (``TransformError`` and its
location), ``runtime`` (the engine's own operations generated code calls), ``arguments``
(the kinds of the caller's arguments), ``identity`` (objects recognised by identity), random draws
replayed, nesting of builds.  Imports nothing else of s2s_ad: every other package stands on this one.
"""
