"""Vector forward mode's target: the batched versions of NumPy's operations (``rules.py``)."""
