"""analyze's tables without Spark: each planned once by whichever thread asks first
(pipeline.Once), and written by load.TableWriter as they are handed over - each once, the
rows in the caller's order, and no table begun is left running when the writer is left."""
from __future__ import annotations

import threading

import pytest

from groupctl.analytics import load
from groupctl.analytics.pipeline import EVENT_TABLES, TABLE_NAMES, Once, Tables


def test_a_table_is_planned_once_whichever_threads_ask():
    calls, gate = [], threading.Event()

    def make():
        calls.append(threading.current_thread().name)
        gate.wait(5)
        return object()

    once = Once(make)
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(once()), name=f"t{i}")
               for i in range(6)]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(5)
    assert len(calls) == 1 and calls[0] in {t.name for t in threads}
    assert len(got) == 6 and all(g is got[0] for g in got)


def test_tables_by_attribute_and_by_name():
    made = []
    planned = {name: Once(lambda name=name: made.append(name) or f"df:{name}")
               for name in TABLE_NAMES}
    tables = Tables("events", planned)
    assert made == []   # nothing planned until asked for
    assert tables.metrics == "df:metrics" and made == ["metrics"]
    assert list(tables.named()) == list(TABLE_NAMES)
    assert sorted(made) == sorted(TABLE_NAMES)
    assert set(EVENT_TABLES) < set(TABLE_NAMES)
    with pytest.raises(AttributeError):
        _ = tables.nothing


@pytest.fixture
def writes(monkeypatch):
    done: list[tuple[str, str]] = []

    def write(out, name, table):
        done.append((name, threading.current_thread().name))
        return [{"table": table()}]

    monkeypatch.setattr(load, "_write", write)
    return done


def test_the_writer_writes_each_table_once_and_gives_rows_in_the_callers_order(tmp_path, writes):
    with load.TableWriter(tmp_path / "out") as writer:
        writer.submit("members", lambda: "m")
        writer.submit("members", lambda: "again")   # ignored: begun already
        rows = writer.rows({"episodes": lambda: "e", "members": lambda: "late",
                            "files": lambda: "f"})
    assert list(rows) == ["episodes", "members", "files"]
    assert rows["members"] == [{"table": "m"}]
    assert sorted(name for name, _ in writes) == ["episodes", "files", "members"]
    assert all(thread.startswith("table") for _, thread in writes)
    assert (tmp_path / "out").is_dir()


def test_leaving_the_writer_waits_for_tables_begun(tmp_path, monkeypatch):
    started, finished, release = threading.Event(), [], threading.Event()

    def write(out, name, table):
        started.set()
        release.wait(5)
        finished.append(name)
        return []

    monkeypatch.setattr(load, "_write", write)
    with pytest.raises(RuntimeError):
        with load.TableWriter(tmp_path, parallel=1) as writer:
            writer.submit("members", lambda: None)
            writer.submit("flapping", lambda: None)   # queued behind members: dropped
            assert started.wait(5)
            threading.Timer(0.2, release.set).start()
            raise RuntimeError("the episodes failed")
    assert finished == ["members"]


def test_csv_cells_that_would_start_a_formula_are_written_as_text(tmp_path):
    """OWASP's CSV injection (issue 36): a group id or reason starting with = + - @ (or a
    tab or carriage return) is written after a `'`, so a spreadsheet shows it as text;
    numbers, typed or plain text, stay numbers."""
    import csv

    hostile = ['=HYPERLINK("http://evil.example/","x")', "+1+cmd|' /C calc'!A0",
               "-2+3", "@SUM(1,2)", "\tx", "\rx"]
    rows = [{"group": g, "n": -1, "text_number": "-1", "ratio": -0.5, "none": None}
            for g in hostile]
    path = tmp_path / "t.csv"
    load.write_csv(path, ["group", "n", "text_number", "ratio", "none"], rows)
    with open(path, newline="") as f:
        read = list(csv.reader(f))
    assert read[0] == ["group", "n", "text_number", "ratio", "none"]
    assert [r[0] for r in read[1:]] == ["'" + g for g in hostile]
    assert all(r[1:] == ["-1", "-1", "-0.5", ""] for r in read[1:]), read
    assert load.csv_cell("-1.5e3") == "-1.5e3" and load.csv_cell("orders") == "orders"
