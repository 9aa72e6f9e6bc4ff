"""The on-disk cache of compiled decoders (groupctl/protocol/codecache.py): a hit gives
the code compile() would, and anything odd in the cache means compiling, never failing."""
from __future__ import annotations

import marshal
import os
import stat

import pytest

from groupctl.protocol import codecache
from groupctl.protocol.messages import DESCRIBE_GROUPS

SOURCE = "def read_struct(buf, pos):\n    return {'x': buf[pos]}, pos + 1\n"
FILENAME = "<groupctl decoder test: v0 {x}>"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUPCTL_CACHE", str(tmp_path))
    monkeypatch.setattr(codecache, "_dir", None)
    yield tmp_path
    codecache._dir = None


def _files(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]


def _run(code) -> tuple:
    env: dict = {}
    exec(code, env)  # noqa: S102 - running the cached code is the point
    return env["read_struct"](b"\x05", 0)


def test_a_miss_compiles_and_stores_then_a_hit_loads(cache, monkeypatch):
    first = codecache.compile_cached(SOURCE, FILENAME)
    assert _run(first) == ({"x": 5}, 1)
    [path] = _files(cache)
    assert "codecs" in path and not path.endswith(".tmp")

    def no_compile(*args):
        raise AssertionError("compiled although cached")

    monkeypatch.setattr(codecache, "compile", no_compile, raising=False)
    again = codecache.compile_cached(SOURCE, FILENAME)
    assert again.co_filename == FILENAME
    assert _run(again) == ({"x": 5}, 1)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other source", "bad checksum"])
def test_a_bad_file_is_recompiled_and_replaced(cache, damage):
    codecache.compile_cached(SOURCE, FILENAME)
    [path] = _files(cache)
    with open(path, "rb") as f:
        name, source, checksum, data = marshal.loads(f.read())
    raw = {
        "garbage": b"\x00not marshal",
        "truncated": marshal.dumps((name, source, checksum, data))[:-7],
        "other source": marshal.dumps((name, source + "#", checksum, data)),
        "bad checksum": marshal.dumps((name, source, checksum ^ 1, data)),
    }[damage]
    with open(path, "wb") as f:
        f.write(raw)
    code = codecache.compile_cached(SOURCE, FILENAME)
    assert _run(code) == ({"x": 5}, 1)
    with open(path, "rb") as f:
        assert marshal.loads(f.read())[1] == SOURCE  # replaced by a good one


def test_same_source_under_another_name_is_its_own_entry(cache):
    a = codecache.compile_cached(SOURCE, FILENAME)
    b = codecache.compile_cached(SOURCE, "<groupctl decoder test: v1 {x}>")
    assert (a.co_filename, b.co_filename) == (FILENAME, "<groupctl decoder test: v1 {x}>")
    assert len(_files(cache)) == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only directories")
def test_an_unwritable_cache_only_costs_the_compile(cache):
    os.chmod(cache, stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert _run(codecache.compile_cached(SOURCE, FILENAME)) == ({"x": 5}, 1)
    finally:
        os.chmod(cache, stat.S_IRWXU)


def test_a_cache_that_is_a_file_only_costs_the_compile(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("GROUPCTL_CACHE", str(blocker))
    monkeypatch.setattr(codecache, "_dir", None)
    try:
        assert _run(codecache.compile_cached(SOURCE, FILENAME)) == ({"x": 5}, 1)
    finally:
        codecache._dir = None


def test_generated_decoders_are_named_by_their_text():
    """The same spec gives the same filename in every process (so cached code matches)."""
    from groupctl.protocol.codegen import compile_reader
    read = compile_reader(DESCRIBE_GROUPS.response, 5, False)
    filename = read.__code__.co_filename
    assert filename.startswith("<groupctl decoder ") and "throttle_time_ms" in filename
    import linecache
    assert "".join(linecache.getlines(filename)) == read.source
