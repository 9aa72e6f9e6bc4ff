"""man/groupctl.1 and completions/* are generated from the typer app
(groupctl.cli.docs) and committed: whenever the CLI changes, regenerate them
(`python -m groupctl.cli.docs`), or this test fails naming the stale files."""
from __future__ import annotations

import subprocess
import sys

from groupctl.cli import docs


def test_committed_man_page_and_completions_are_current():
    proc = subprocess.run([sys.executable, "-m", "groupctl.cli.docs", "--check"],
                          capture_output=True, text=True, timeout=120, check=False,
                          cwd=docs.ROOT)
    assert proc.returncode == 0, (
        f"stale generated docs:\n{proc.stdout}{proc.stderr}"
        "regenerate with: python -m groupctl.cli.docs")
    assert proc.stdout == ""


def test_check_names_stale_files_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(docs, "ROOT", tmp_path)
    (tmp_path / "man").mkdir()
    (tmp_path / "man" / "groupctl.1").write_text("an old page\n")
    assert docs.main(["--check"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["stale: man/groupctl.1", "stale: completions/groupctl.bash",
                                "stale: completions/_groupctl", "stale: completions/groupctl.fish"]
    assert "python -m groupctl.cli.docs" in err
    assert (tmp_path / "man" / "groupctl.1").read_text() == "an old page\n"
    assert not (tmp_path / "completions").exists()
