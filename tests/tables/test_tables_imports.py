"""The tables service asks the referee about the rules and never loads them itself (DESIGN.md,
section 2): importing every module of its process leaves ``goti.rules`` unloaded."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# The tables process: its own package and the web port it serves beside gRPC.
TABLES_PACKAGES = ("goti.tables", "goti.web")


def test_the_tables_service_loads_no_rules_module() -> None:
    # A fresh interpreter: in this one other tests have long since imported the rules.
    script = textwrap.dedent(
        f"""
        import importlib, json, pkgutil, sys

        imported = []
        for name in {TABLES_PACKAGES!r}:
            package = importlib.import_module(name)
            imported.append(name)
            for module in pkgutil.walk_packages(package.__path__, name + "."):
                importlib.import_module(module.name)
                imported.append(module.name)
        loaded = sorted(name for name in sys.modules if name.split(".")[:2] == ["goti", "rules"])
        print(json.dumps({{"imported": imported, "rules": loaded}}))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert "goti.tables.__main__" in report["imported"]
    assert "goti.web.server" in report["imported"]
    assert report["rules"] == []
