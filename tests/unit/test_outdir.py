"""analyze --out's writing: all new files or none; the user's other files stay; no temp
left behind."""
from __future__ import annotations

import pytest

from groupctl.cli.outdir import replaced_atomically
from groupctl.errors import UsageError


def _tree(root) -> dict:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _old_out(tmp_path):
    out = tmp_path / "out"
    (out / "parquet" / "metrics").mkdir(parents=True)
    (out / "parquet" / "metrics" / "part-old").write_text("old")
    (out / "report.html").write_text("old report")
    (out / "notes.txt").write_text("the user's")
    return out


def test_success_replaces_what_is_written_and_keeps_the_rest(tmp_path):
    out = _old_out(tmp_path)
    with replaced_atomically(out) as staging:
        (staging / "parquet" / "metrics").mkdir(parents=True)
        (staging / "parquet" / "metrics" / "part-new").write_text("new")
        (staging / "report.html").write_text("new report")
        (staging / "metrics.csv").write_text("a,b")
    assert _tree(out) == {"metrics.csv": "a,b", "notes.txt": "the user's",
                          "parquet/metrics/part-new": "new", "report.html": "new report"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_new_directory_is_created(tmp_path):
    out = tmp_path / "new"
    with replaced_atomically(out) as staging:
        (staging / "report.html").write_text("r")
    assert _tree(out) == {"report.html": "r"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"),
                                   RuntimeError("Py4JJavaError: java.io.IOException: No space "
                                                "left on device\n\tat ...")])
def test_a_full_disk_while_writing_leaves_the_old_files(tmp_path, error):
    out = _old_out(tmp_path)
    before = _tree(out)
    with pytest.raises(UsageError) as info, replaced_atomically(out) as staging:
        (staging / "report.html").write_text("half")
        raise error
    assert str(info.value) == (f"--out {out}: cannot write: No space left on device; "
                               f"{out} is unchanged")
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_any_other_error_is_raised_as_is_and_leaves_the_old_files(tmp_path):
    out = _old_out(tmp_path)
    before = _tree(out)
    with pytest.raises(KeyError), replaced_atomically(out) as staging:
        (staging / "report.html").write_text("half")
        raise KeyError("x")
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
