"""The protocol layer's imports run one way: spec.py (the Api entry points) -> codegen.py /
encoders.py (decoders, encoders) -> schema.py (the spec language). No cycle, also not
through a function-level import."""
from __future__ import annotations

import ast
from pathlib import Path

import groupctl

PROTOCOL = Path(groupctl.__file__).parent / "protocol"


def _imported_modules(name: str) -> set[str]:
    tree = ast.parse((PROTOCOL / f"{name}.py").read_text())
    return {node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}


def test_codegen_and_encoders_never_import_spec():
    for name in ("codegen", "encoders", "schema"):
        assert "spec" not in _imported_modules(name), name
    assert not {"codegen", "encoders", "spec"} & _imported_modules("schema")
    assert {"codegen", "encoders", "schema"} <= _imported_modules("spec")
