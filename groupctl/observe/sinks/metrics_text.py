"""The Prometheus text format (0.0.4) of a watch's metrics, written by hand because it must
be quick: at 2,000 groups a scrape is some 60,000 lines, and prometheus_client's
generate_latest() takes about 10 µs a line (0.6 s). Each group's lines are built once per
change of the group (its next event) and kept; a scrape joins the kept text, family by
family, and builds only the `live` families (time-dependent: time in the current state).

The exposition is prometheus_client's: `# HELP` / `# TYPE` before every family (also when
it has no samples), label names sorted (a group's `cluster` and `group` first), values as floatToGoString writes them, counters
named with `_total`. Not written: the `_created` series prometheus_client adds to every
counter and histogram (a gauge per series that Prometheus 2 stores as a series of its
own; nothing here reads it).

    family = Family("groupctl_group_state", "gauge", "...")
    text = family.header() + "".join(lines)
    line = sample_line("groupctl_group_state", labels_text(pairs), 1.0)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from prometheus_client.utils import floatToGoString

# (name suffix, label pairs, value): "_bucket", (("le", "0.5"), ...), 3
Sample = tuple[str, tuple[tuple[str, str], ...], float]


@dataclass(frozen=True)
class Family:
    name: str          # counters: without `_total` (the samples carry it)
    kind: str          # "gauge", "counter" or "histogram"
    help: str

    def header(self) -> str:
        name = self.name + "_total" if self.kind == "counter" else self.name
        text = self.help.replace("\\", r"\\").replace("\n", r"\n")
        return f"# HELP {name} {text}\n# TYPE {name} {self.kind}\n"


def escape(value: str) -> str:
    """A label value as the text format quotes it."""
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
    return value


def labels_text(pairs: Iterable[tuple[str, str]]) -> str:
    """`{a="1",b="2"}` with the names sorted; "" without labels."""
    inner = ",".join(f'{k}="{escape(v)}"' for k, v in sorted(pairs))
    return "{" + inner + "}" if inner else ""


def value_text(value: float) -> str:
    """floatToGoString's text, quicker for the common whole numbers."""
    if type(value) is int and -1_000_000 < value < 1_000_000:
        return f"{value}.0"
    return floatToGoString(value)


def sample_line(name: str, labels: str, value: float) -> str:
    return f"{name}{labels} {value_text(value)}\n"


_OWN: dict[tuple, str] = {}   # a sample's own labels -> their text (few: types x states, le...)


def _own_text(pairs: tuple[tuple[str, str], ...]) -> str:
    text = _OWN.get(pairs)
    if text is None:
        if len(_OWN) > 10_000:   # many topics (lag): bounded, never a leak
            _OWN.clear()
        text = _OWN[pairs] = ",".join(f'{k}="{escape(v)}"' for k, v in sorted(pairs))
    return text


def base_text(base: tuple[tuple[str, str], ...]) -> str:
    """The `base` labels' text, in their order (a group's: written once per group)."""
    return ",".join(f'{k}="{escape(v)}"' for k, v in base)


def family_lines(family: Family, head: str, samples: Iterable[Sample]) -> str:
    """The sample lines of one family, each with the labels of `head` (base_text) first
    and then its own, sorted."""
    out = []
    name = family.name
    for suffix, pairs, value in samples:
        own = _OWN.get(pairs) or _own_text(pairs)
        labels = f"{head},{own}" if head and own else head or own
        out.append(f"{name}{suffix}{{{labels}}} {value_text(value)}\n" if labels
                   else f"{name}{suffix} {value_text(value)}\n")
    return "".join(out)


class Histogram:
    """Cumulative buckets, a count and a sum (prometheus_client's Histogram, without its
    lock: it is changed from one thread and read as whole numbers)."""

    def __init__(self, buckets: tuple[float, ...]):
        self.bounds = tuple(float(b) for b in buckets) + (float("inf"),)
        self.les = tuple(floatToGoString(b) for b in self.bounds)   # the `le` labels
        self.counts = [0] * len(self.bounds)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        for i, bound in enumerate(self.bounds):
            if value <= bound:
                self.counts[i] += 1
                break
        self.sum += value

    def samples(self, pairs: tuple[tuple[str, str], ...] = ()) -> Iterable[Sample]:
        total = 0
        for le, n in zip(self.les, list(self.counts)):
            total += n
            yield "_bucket", pairs + (("le", le),), total
        yield "_count", pairs, total
        yield "_sum", pairs, self.sum
