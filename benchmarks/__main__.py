"""``python -m benchmarks``: see ``benchmarks/command_line.py``."""
import sys

from benchmarks.command_line import main

sys.exit(main())
