"""Benchmarks of s2s_ad: ``python -m benchmarks --help`` (see ``benchmarks/command_line.py``).

``workloads.py`` holds the differentiated functions with their hand-written
gradients, ``cases.py`` their arguments, ``check.py`` the finite-difference
check, ``measure.py`` and ``timing.py`` the measurements, ``peers.py`` the
optional other libraries and ``report.py`` the table and JSON.
``checkpointing.py`` is a separate benchmark of checkpointed loops.
"""
