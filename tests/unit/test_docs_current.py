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
    old_readme = "".join(f"{begin}\n| 1 | an old table |\n{end}\n"
                         for begin, end in map(docs._markers, docs.README_BLOCKS))
    (tmp_path / "README.md").write_text(old_readme)
    assert docs.main(["--check"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["stale: man/groupctl.1", "stale: README.md",
                                "stale: completions/groupctl.bash",
                                "stale: completions/_groupctl", "stale: completions/groupctl.fish"]
    assert "python -m groupctl.cli.docs" in err
    assert (tmp_path / "man" / "groupctl.1").read_text() == "an old page\n"
    assert (tmp_path / "README.md").read_text() == old_readme
    assert not (tmp_path / "completions").exists()


def test_readme_tables_are_rewritten_between_their_markers_only():
    begin, end = docs._markers("exit-codes")
    env_begin, env_end = docs._markers("environment")
    text = f"# x\nbefore\n{begin}\nstale\n{end}\nmiddle\n{env_begin}\n{env_end}\nafter\n"
    out = docs.readme(text)
    assert out.startswith("# x\nbefore\n") and out.endswith(f"{env_end}\nafter\n")
    assert "stale" not in out and "| 8 | a watched condition was violated" in out
    assert "| `GROUPCTL_LAB_HOME` |" in out and "\nmiddle\n" in out
    assert docs.readme(out) == out
