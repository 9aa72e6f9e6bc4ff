"""man/groupctl.1, completions/* and the docs site's generated blocks
(every command's options; the events, JSON fields, metrics, exit codes and environment
references) are generated from the code (groupctl.cli.docs, cli.docs_pages,
cli.docs_metrics) and committed: whenever the code changes them, regenerate
(`python -m groupctl.cli.docs`), or this test fails naming the stale files."""
from __future__ import annotations

import subprocess
import sys

import pytest

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
    (tmp_path / "README.md").write_text("# a front page written by hand\n")
    assert docs.main(["--check"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["stale: man/groupctl.1",
                                "stale: completions/groupctl.bash",
                                "stale: completions/_groupctl", "stale: completions/groupctl.fish"]
    assert "python -m groupctl.cli.docs" in err
    assert (tmp_path / "man" / "groupctl.1").read_text() == "an old page\n"
    assert not (tmp_path / "completions").exists()


# ---- the docs site's generated blocks (groupctl.cli.docs_pages) ---------------------------
def test_a_command_without_its_page_stops_the_generator(tmp_path):
    from groupctl.cli import docs_pages

    (tmp_path / "docs" / "commands").mkdir(parents=True)
    with pytest.raises(SystemExit, match=r"docs/commands/\w[\w-]*\.md is missing"):
        docs_pages.generated_pages(tmp_path)


def test_site_blocks_are_rewritten_between_their_markers_only():
    from groupctl.cli import docs_pages

    begin, end = docs_pages.markers("options: list")
    text = f"# list\nprose\n{begin}\nstale\n{end}\nafter\n"
    out = docs_pages.rewrite(text, "options: list", "fresh", "list.md")
    assert out == f"# list\nprose\n{begin}\nfresh\n{end}\nafter\n"
    with pytest.raises(SystemExit, match="list.md lacks the markers"):
        docs_pages.rewrite("# list\n", "options: list", "fresh", "list.md")


def test_every_command_and_option_is_on_its_page():
    import typer._click as click

    root = docs._root_command()
    ctx = click.Context(root, info_name="groupctl")
    for path, command, cmd_ctx in docs._walk(root, ctx, []):
        page = (docs.ROOT / "docs" / "commands" / f"{path[0]}.md").read_text()
        assert f"### `groupctl {' '.join(path)}`" in page
        for param in command.get_params(cmd_ctx):
            for opt in param.opts:
                if opt.startswith("-"):
                    assert f"`{opt}" in page or f" {opt}" in page, (path, opt)


def test_the_metrics_reference_lists_every_family_of_the_exporters():
    from groupctl.cli.docs_metrics import metric_docs
    from groupctl.coordinator.canary import metrics as canary
    from groupctl.observe.sinks import metrics as watch
    from groupctl.observe.sinks.lag_metrics import LAG_FAMILIES

    families = [f.family for f in watch.GROUP_FAMILIES + LAG_FAMILIES]
    families += [watch.UP, watch.FOLLOWED, watch.ROUNDS, watch.FAILED, watch.LOST,
                 canary.STEP, canary.ROUND, canary.ROUNDS, canary.FAILURES, canary.UP]
    listed = {m.name for m in metric_docs()}
    page = (docs.ROOT / "docs" / "reference" / "metrics.md").read_text()
    for f in families:
        name = f.name + ("_total" if f.kind == "counter" else "")
        assert name in listed and f"| `{name}` | {f.kind} |" in page
    assert {"groupctl_lag_rounds_total", "groupctl_lag_last_round_seconds"} <= listed
