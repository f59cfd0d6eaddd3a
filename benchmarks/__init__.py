"""Benchmarks of s2s_ad: ``python -m benchmarks --help`` (see ``benchmarks/command_line.py``).

``workloads.py`` holds the differentiated functions with their hand-written
gradients, ``cases.py`` their arguments, ``check.py`` the finite-difference
check, ``measure.py`` and ``timing.py`` the measurements, ``peers.py`` the
optional other libraries and ``report.py`` the table and JSON.
``numba_twins.py`` holds the hand-written gradients in the subset Numba
compiles and ``compiled.py`` the optional compiled columns (those twins, and
s2s_ad's ``backend="numba"``); ``outside.py`` the optional outside references
(``../shared/bench``); ``first_calls.py`` the first calls and memory measured
in new processes under limits, ``jax_rewrites.py`` the ``lax.scan`` rewrites
JAX is given there, and ``report_first_calls.py`` their tables.
``checkpointing.py`` is a separate benchmark of checkpointed loops.
"""
