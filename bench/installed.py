"""Make the timed groupctl look like an installed one before a benchmark times it.

`pip install` byte-compiles a package, so users never pay for compiling groupctl's
sources. An editable install under PYTHONDONTWRITEBYTECODE=1 (set on some CI and
container images) compiles every module on every run instead: about 45 ms per command on
a 2-core machine, a fifth of a `describe`. Benchmarks call byte_compile_groupctl() first
so they time what users run; compileall writes the .pyc files even when that variable
is set, and Python reads them either way.
"""
from __future__ import annotations

import compileall
from pathlib import Path

import groupctl


def byte_compile_groupctl(tree: Path | None = None) -> None:
    """The imported groupctl's modules, or those of the checkout `tree` (a --before tree:
    its stale .pyc files would otherwise be recompiled on every timed run)."""
    package = Path(groupctl.__file__).parent if tree is None else Path(tree) / "groupctl"
    compileall.compile_dir(str(package), quiet=1)
