"""The rules library is pure (DESIGN.md, section 2): it imports nothing but itself and the
standard library.  `lint-imports` forbids Goti's other packages and the third-party packages
Goti installs by name; this catches every other import, a new dependency's included."""

from __future__ import annotations

import sys

import grimp


def test_the_rules_import_only_the_standard_library() -> None:
    graph = grimp.build_graph("goti", include_external_packages=True)
    rules = graph.find_descendants("goti.rules") | {"goti.rules"}
    outside = {
        f"{module} imports {imported}"
        for module in rules
        for imported in graph.find_modules_directly_imported_by(module)
        if imported not in rules and imported.split(".")[0] not in sys.stdlib_module_names
    }
    assert sorted(outside) == []
