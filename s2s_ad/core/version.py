"""The package's version (pyproject.toml's): one place, read by ``s2s_ad.__version__`` and by what
writes it into files (the header of an exported module, ``export.py``)."""

__version__ = "0.1.0"
