"""A short helper of another file than its caller's, reading a global its caller's module also defines
(tests/corpora/short_helper_functions.py): it stays a call and reads its own module's value."""
OFFSET = -3.0


def shifted(x):
    return x + OFFSET


def total_of(params):
    """Given a container, this helper is lowered in place into its caller; ``shifted``, short but of
    another file than that caller's, stays a call."""
    return (shifted(params["w"]) ** 2).sum() * params["scale"]
