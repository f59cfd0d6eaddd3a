"""``python -m s2s_ad`` is the ``s2s-ad`` command."""
import sys

from .api.cli import main

sys.exit(main())
