"""protocol/bodies.py (TypedDicts of the message specs) and protocol/error_codes.py (the
ErrorCode class) are generated (groupctl.protocol.typegen) and committed: whenever a spec or
the error table changes, regenerate them (`python -m groupctl.protocol.typegen`), or this
test fails naming the stale files."""
from __future__ import annotations

import subprocess
import sys
import typing

from groupctl.protocol import bodies, typegen
from groupctl.protocol.errors import _TABLE, ErrorCode
from groupctl.protocol.messages import APIS, CONSUMER_GROUP_DESCRIBE


def test_committed_types_are_current():
    proc = subprocess.run([sys.executable, "-m", "groupctl.protocol.typegen", "--check"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, (
        f"stale generated types:\n{proc.stdout}{proc.stderr}"
        "regenerate with: python -m groupctl.protocol.typegen")
    assert proc.stdout == ""


def test_error_code_is_the_table():
    assert [(m.name, m.value) for m in ErrorCode] == [(e.name, e.code) for e in _TABLE]


def test_every_api_has_a_response_type_with_every_field():
    for api in APIS.values():
        td = getattr(bodies, f"{api.name}Response")
        assert set(td.__required_keys__) == {f.name for f in api.response.fields}, api.name
        assert td.__optional_keys__ == {"_unknown_tags", "_trailing"}


def test_a_nested_struct_is_typed_down_to_its_leaves():
    members = typing.get_type_hints(bodies.ConsumerGroupDescribeResponseGroupsMembers)
    assert members["member_epoch"] is int and members["instance_id"] == str | None
    groups = typing.get_type_hints(bodies.ConsumerGroupDescribeResponseGroups)
    assert groups["members"] == list[bodies.ConsumerGroupDescribeResponseGroupsMembers]
    assert CONSUMER_GROUP_DESCRIBE.name == "ConsumerGroupDescribe"


def test_check_names_stale_files_and_writes_nothing(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "bodies.py"
    stale.write_text("old\n")
    monkeypatch.setattr(typegen, "generated_files",
                        lambda: {stale: "new\n", tmp_path / "error_codes.py": "codes\n"})
    assert typegen.main(["--check"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["stale: bodies.py", "stale: error_codes.py"]
    assert "python -m groupctl.protocol.typegen" in err
    assert stale.read_text() == "old\n" and not (tmp_path / "error_codes.py").exists()


def test_every_message_constant_is_typed_for_the_checker():
    """Each spec module annotates its Api with its response TypedDict, and messages/__init__
    imports it for the type checker (the lazy __getattr__ is invisible to mypy): a new
    message module needs both, or its responses are Any."""
    import ast
    from pathlib import Path

    from groupctl.protocol import messages

    checked = {(node.module, alias.name, alias.asname)
               for node in ast.walk(ast.parse(Path(messages.__file__).read_text()))
               if isinstance(node, ast.ImportFrom) for alias in node.names}
    for const, module in messages._MODULES.items():
        assert (module, const, const) in checked, f"messages/__init__.py: import {const} as {const}"
        tree = ast.parse(Path(messages.__file__).with_name(f"{module}.py").read_text())
        annotated = {n.target.id: ast.unparse(n.annotation) for n in tree.body
                     if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        api = getattr(messages, const)
        assert annotated.get(const) == f"Api[{api.name}Response]", (module, annotated)
