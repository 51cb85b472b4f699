"""goti's build: the metadata is in pyproject.toml; this adds the optional compiled modules of
goti.ai.  The build module is the SDK's (clients/mypyc_build.py), which the sdist carries with
the rules' sources that mypyc reads for their types (MANIFEST.in)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "clients"))

from mypyc_build import setup_with_mypyc  # noqa: E402 (found through the line above)

setup_with_mypyc(HERE)
