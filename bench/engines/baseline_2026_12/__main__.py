"""Runs the frozen engine on standard input and output.

python -m bench.engines.baseline_2026_12
"""

from __future__ import annotations

import sys

from .engine import main

if __name__ == "__main__":
    sys.exit(main())
