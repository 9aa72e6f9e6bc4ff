"""The fuzz harness registry: one Harness per parser groupctl runs on hostile input.

A harness is a function `one_input(data: bytes) -> None` that feeds `data` to a parser the
way groupctl does, plus `documented`: the exceptions the parser documents for bad input.

What counts as a crash (issue 21: "anything other than the documented decode error"):
  - any exception out of `one_input` that is not an instance of one of `documented`;
    IndexError, struct.error, UnicodeDecodeError, KeyError, TypeError, a bare ValueError,
    RecursionError, MemoryError, AssertionError (a harness's own oracle, e.g. a round trip
    that does not hold) are all crashes;
  - a hang: one input running past libFuzzer's -timeout (bench/fuzz.py: 10 s; a harness
    may set a tighter CPU budget of its own, the regex one does);
  - the CLI harness: exit 1 ("internal error"), a traceback on stderr without --debug, or
    an exit code outside docs/reference/exit-codes.md.
The documented errors are: protocol/ decoders -> groupctl.protocol.types.DecodeError
(its docstring: "Readers raise DecodeError, never IndexError or struct.error"); config/
parsers -> groupctl.errors.UsageError (exit 2); the regex twins document nothing (a line
either matches or does not).

Adding a harness (the records engineer's record-batch / coordinator-record decoders plug
in here): write `one_input` in a module of tests/fuzz, decorate it with
`@harness("name", documented=(DecodeError,), ...)`, add the module to MODULES below, and
put seed files under tests/fuzz/corpus/<name>/. run.py, bench/fuzz.py and the suite's
smoke (tests/unit/test_fuzz_smoke.py) pick it up from REGISTRY.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Callable

CORPUS = Path(__file__).resolve().parent / "corpus"

# Modules that register harnesses, imported by load(); the records engineer's module(s)
# go here (e.g. "tests.fuzz.targets_records").
MODULES = (
    "tests.fuzz.targets_protocol",
    "tests.fuzz.targets_config",
    "tests.fuzz.targets_patterns",
    "tests.fuzz.targets_cli",
    "tests.fuzz.targets_records",
)

# Packages atheris instruments for coverage (run.py), as they are imported.
INSTRUMENT = ("groupctl", "tests.fuzz", "yaml")


@dataclass
class Harness:
    name: str
    one_input: Callable[[bytes], None]
    documented: tuple[type[BaseException], ...]
    setup: Callable[[], None] | None = None   # once per process, before the first input
    max_len: int = 4096                       # libFuzzer -max_len
    smoke_runs: int = 3000                    # executions in the suite's smoke
    timeout: int = 10                         # libFuzzer -timeout (seconds per input)
    dictionary: tuple[str, ...] = ()          # tokens for libFuzzer -dict (mutations splice them)
    about: str = ""
    _ready: bool = field(default=False, repr=False)

    @property
    def corpus(self) -> Path:
        return CORPUS / self.name

    def prepare(self) -> None:
        if not self._ready:
            if self.setup is not None:
                self.setup()
            self._ready = True

    def check(self, data: bytes) -> None:
        """Run one input; documented errors pass, anything else propagates (a crash)."""
        try:
            self.one_input(data)
        except self.documented:
            pass

    def seeds(self) -> list[tuple[str, bytes]]:
        if not self.corpus.is_dir():
            return []
        return [(p.name, p.read_bytes()) for p in sorted(self.corpus.iterdir()) if p.is_file()]


REGISTRY: dict[str, Harness] = {}


def harness(name: str, *, documented: tuple[type[BaseException], ...], **options):
    """Register `one_input` as the harness `name` (see the module doc)."""

    def register(fn: Callable[[bytes], None]):
        if name in REGISTRY:
            raise ValueError(f"fuzz harness {name!r} registered twice")
        REGISTRY[name] = Harness(name, fn, documented, about=(fn.__doc__ or "").strip(),
                                 **options)
        return fn

    return register


def load() -> dict[str, Harness]:
    for module in MODULES:
        import_module(module)
    return REGISTRY


class Crash(AssertionError):
    """A harness's own oracle failed (a round trip, an exit code): a crash, not a skip."""
