"""Run one fuzz harness under atheris (libFuzzer, coverage-guided):

    PYTHONPATH=. python -m tests.fuzz.run NAME [--collect DIR] [libFuzzer flags] [CORPUS...]
    PYTHONPATH=. python -m tests.fuzz.run --list

groupctl (and a harness's extra packages) is instrumented as it is imported, the
generated codecs of protocol/messages included (they are plain modules).

Without --collect the first crash stops the run, as libFuzzer does (the input is written
to crash-<sha1>, see -artifact_prefix). With --collect DIR the run goes on: each crash is
counted, the first input of each distinct crash (exception type and the innermost frame
of groupctl, or the oracle's message) is saved under DIR, and DIR/crashes.json holds
{signature: {"count": n, "file": ..., "error": ...}}. A hang still ends the run (libFuzzer
-timeout). bench/fuzz.py runs every harness this way.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import traceback


def _signature(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "groupctl" in f.filename and "/tests/" not in f.filename]
    where = f"{os.path.basename(ours[-1].filename)}:{ours[-1].lineno}" if ours else "-"
    if where == "-" and frames:
        where = f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}"
    first = str(exc).splitlines()[0][:80] if str(exc) else ""
    from tests.fuzz.registry import Crash

    return f"{type(exc).__name__} {where}" + (f" {first}" if isinstance(exc, Crash) else "")


class Collector:
    def __init__(self, directory: str):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(directory, "crashes.json")
        self.crashes: dict = {}

    def record(self, exc: BaseException, data: bytes) -> None:
        sig = _signature(exc)
        entry = self.crashes.get(sig)
        if entry is None:
            name = "crash-" + hashlib.sha1(data).hexdigest()
            with open(os.path.join(self.dir, name), "wb") as f:
                f.write(data)
            entry = self.crashes[sig] = {"count": 0, "file": name,
                                         "error": f"{type(exc).__name__}: {exc}"[:500]}
            sys.stderr.write(f"fuzz: new crash {sig}: {entry['error'][:200]}\n")
        entry["count"] += 1
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.crashes, f, indent=1)
        os.replace(tmp, self.path)


def _write_dictionary(h) -> str:
    """The harness's tokens as a libFuzzer dictionary file (one "escaped" token a line)."""
    import tempfile

    fd, path = tempfile.mkstemp(prefix=f"groupctl-fuzz-{h.name}-", suffix=".dict")
    with os.fdopen(fd, "w") as f:
        for token in h.dictionary:
            escaped = "".join(c if 0x20 <= b < 0x7F and c not in '"\\' else f"\\x{b:02x}"
                              for b in token.encode() for c in [chr(b)])
            f.write(f'"{escaped}"\n')
    return path


def main(argv: list[str]) -> None:
    import atheris

    from tests.fuzz.registry import INSTRUMENT, REGISTRY, load

    if argv[:1] == ["--list"]:
        for name, h in load().items():
            print(f"{name:12} {h.about.splitlines()[0] if h.about else ''}")
        return
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    name, rest = argv[0], argv[1:]
    collector = None
    if rest[:1] == ["--collect"]:
        collector = Collector(rest[1])
        rest = rest[2:]

    # The import hook stays on for the whole run: commands import modules on first use,
    # and those must be instrumented too. The harness modules are instrumented as well:
    # their branches (which API, which pattern matched) guide the fuzzer where the parser
    # is C code (re) or data; PyYAML (pure Python) guides the contexts harness.
    atheris.instrument_imports(include=list(INSTRUMENT)).__enter__()
    load()
    if name not in REGISTRY:
        sys.exit(f"no fuzz harness {name!r}; known: {', '.join(REGISTRY)}")
    h = REGISTRY[name]
    h.prepare()
    for seed in [b"", bytes(16), *(s for _, s in h.seeds())]:  # import what it touches
        try:
            h.check(seed)
        except Exception:  # noqa: BLE001, S110 - libFuzzer runs the seeds again and reports
            pass

    def one_input(data: bytes) -> None:
        try:
            h.check(data)
        except Exception as exc:  # noqa: BLE001 - everything not documented is a crash
            if collector is None:
                raise
            collector.record(exc, data)

    flags = [f"-max_len={h.max_len}", f"-timeout={h.timeout}"]
    if h.dictionary:
        flags.append(f"-dict={_write_dictionary(h)}")
    given = {a.split("=", 1)[0] for a in rest}
    args = [sys.argv[0]] + [f for f in flags if f.split("=", 1)[0] not in given] + rest
    atheris.Setup(args, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv[1:])
