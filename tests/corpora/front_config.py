"""A module attribute that tests/driver/test_stale_code_and_caches.py rebinds (``front_config.K = 5.0``)."""
K = 2.0
