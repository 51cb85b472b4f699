"""The optional compiled build: a distribution's hot modules through mypyc, where it can.

Both distributions' ``setup.py`` call :func:`setup_with_mypyc`.  The modules to compile and
mypy's options come from the distribution's ``pyproject.toml`` (``[tool.goti.mypyc]``).  A
wheel carries each compiled module beside the Python source it was compiled from, and Python
imports the compiled one first.  Each module is an extension of its own (with its own
library, ``movegen__mypyc``), so that nothing is added at the top level of ``site-packages``
and each module's ``__file__`` is where it lies; calls between them stay native C calls.
The pure Python package is built instead, and works the same, when:

- ``GOTI_PURE_PYTHON=1`` is set at build time;
- no C compiler or no Python headers are found;
- mypyc is missing, refuses a module or crashes, or the C build fails (a partly built set is
  removed: a compiled module calls the others compiled with it);
- the install is editable: a compiled module beside its source would hide every later edit
  of that source, so ``pip install -e`` always runs the Python files.

The compiled modules are the same modules, so the same tests run on both (``make
unit-compiled``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from setuptools import Command, Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.errors import BaseError, CCompilerError

PURE_PYTHON_VARIABLE = "GOTI_PURE_PYTHON"
"""Set to 1 at build time for the pure-Python wheel."""


@dataclass(frozen=True)
class CompiledPart:
    """What a distribution compiles: its ``[tool.goti.mypyc]`` table."""

    modules: tuple[str, ...]
    """Source files, relative to the distribution's folder."""
    mypy_options: tuple[str, ...]


def compiled_part(project: Path) -> CompiledPart:
    """The ``[tool.goti.mypyc]`` table of the distribution in ``project``."""
    table = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["goti"]["mypyc"]
    return CompiledPart(
        modules=tuple(table["modules"]),
        mypy_options=tuple(table["mypy-options"]),
    )


def _why_not_compiled() -> str | None:
    """Why this build is pure Python before trying, or None when it may compile."""
    if os.environ.get(PURE_PYTHON_VARIABLE, "") == "1":
        return f"{PURE_PYTHON_VARIABLE}=1"
    # The compiler setuptools will call: $CC, else the one Python was built with.
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")[:1]
    if not compiler or shutil.which(compiler[0]) is None:
        named = repr(compiler[0]) if compiler else "none named"
        return f"no C compiler found ({named} cannot be run; CC names the compiler)"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return "no Python headers (Python.h) found"
    return None


BUILD_MESSAGE_PREFIX = "goti build: "
"""Starts each line this module says on stderr: ``make wheels`` shows those of its logs."""


def _say(message: str) -> None:
    print(f"{BUILD_MESSAGE_PREFIX}{message}", file=sys.stderr)


class CompileWithMypyc(Command):
    """The ``build`` step before ``build_ext``: mypyc writes the C of the distribution's
    :class:`CompiledPart` and the extensions to build from it replace the placeholder (which
    stays, and builds nothing, for pure Python)."""

    description = "write the C of the modules listed in [tool.goti.mypyc] with mypyc"
    user_options: ClassVar[list[tuple[str, str | None, str]]] = []
    part: ClassVar[CompiledPart]
    editable_mode = False
    """Set by setuptools for an editable install."""

    def initialize_options(self) -> None:
        self.build_temp: str | None = None

    def finalize_options(self) -> None:
        self.set_undefined_options("build", ("build_temp", "build_temp"))

    def run(self) -> None:
        extensions = self._extensions()
        if extensions:
            self.distribution.ext_modules = extensions

    def _extensions(self) -> list[Extension]:
        if self.editable_mode:
            _say("editable install: the Python sources run as they are, uncompiled")
            return []
        try:
            from mypyc.build import mypycify  # noqa: PLC0415 (a build tool, maybe absent)
        except ImportError:
            _say("mypyc is not installed: building pure Python")
            return []
        assert self.build_temp is not None
        target = Path(self.build_temp) / "mypyc"
        # A mypy cache of its own: the project's .mypy_cache is for mypy without mypyc.
        cache = ["--cache-dir", str(target / "mypy-cache")]
        try:
            made = mypycify(
                [*self.part.mypy_options, *cache, *self.part.modules],
                separate=True,
                target_dir=str(target),
                opt_level="3",
            )
        except SystemExit:
            # mypyc has said on stderr what it refused, and exits.
            _say("mypyc could not compile the modules: building pure Python")
            return []
        except Exception as error:  # a crash of mypyc's own: the fallback holds all the same
            _say(f"mypyc failed ({type(error).__name__}: {error}): building pure Python")
            return []
        # With setuptools imported first, mypyc makes setuptools' own extensions.
        return [extension for extension in made if isinstance(extension, Extension)]


class BuildExtOrFallBack(build_ext):
    """``build_ext`` that skips the placeholder and leaves no extension at all when one of
    them fails to build: the compiled modules call each other."""

    def run(self) -> None:
        self.extensions = [extension for extension in self.extensions if extension.sources]
        if not self.extensions:
            return
        try:
            super().run()
        except (BaseError, CCompilerError, OSError) as error:
            _say(f"the C build failed ({error}): building pure Python")
            for output in self.get_outputs():
                Path(output).unlink(missing_ok=True)
            self.extensions = []
            return
        _say(f"compiled with mypyc: {', '.join(self._compiled_module_names())}")

    def _compiled_module_names(self) -> list[str]:
        """The modules compiled, without mypyc's libraries of their C (``*__mypyc``)."""
        names = (self.get_ext_fullname(extension.name) for extension in self.extensions)
        return sorted(name for name in names if not name.endswith("__mypyc"))


class BuildWithMypyc(build):
    """``build`` with mypyc's step first."""

    sub_commands: ClassVar[list[tuple[str, Callable[[Any], bool] | None]]] = [
        ("mypyc", build.has_ext_modules),
        *build.sub_commands,
    ]


def setup_with_mypyc(project: Path) -> None:
    """``setuptools.setup()`` for the distribution in ``project``, its modules compiled when
    they can be (the rest of the metadata is in its ``pyproject.toml``)."""
    part = compiled_part(project)
    reason = _why_not_compiled()
    if reason is not None:
        _say(f"{reason}: building pure Python")
        setup()
        return

    class CompilePart(CompileWithMypyc):
        pass

    CompilePart.part = part
    # mypyc's step replaces this placeholder with its own extensions when it can: it only
    # tells setuptools that the wheel is for this platform and that the build steps must run.
    # mypyc runs at build time alone, never for an sdist or the metadata.
    setup(
        ext_modules=[Extension("goti.compiled_by_mypyc", sources=[])],
        cmdclass={"build": BuildWithMypyc, "mypyc": CompilePart, "build_ext": BuildExtOrFallBack},
    )


def describe_wheel(wheel: Path) -> str:
    """Which build a wheel is: the modules it carries compiled, or pure Python."""
    with zipfile.ZipFile(wheel) as archive:
        compiled = sorted(
            name.split(".", 1)[0].replace("/", ".")
            for name in archive.namelist()
            if name.endswith((".so", ".pyd")) and not name.split(".", 1)[0].endswith("__mypyc")
        )
    if not compiled:
        return "pure Python"
    return f"compiled (mypyc): {', '.join(compiled)}"


if __name__ == "__main__":
    # `python clients/mypyc_build.py dist/*.whl`, as `make wheels` ends.
    for path in sys.argv[1:]:
        print(f"{Path(path).name}: {describe_wheel(Path(path))}")
