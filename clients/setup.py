"""goti-client's build: the metadata is in pyproject.toml; this adds the optional compiled
modules of goti.rules (mypyc_build.py says how and when)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mypyc_build import setup_with_mypyc  # noqa: E402 (found through the line above)

setup_with_mypyc(HERE)
