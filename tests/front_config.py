"""A module attribute that tests/test_trust_front.py rebinds (``front_config.K = 5.0``)."""
K = 2.0
