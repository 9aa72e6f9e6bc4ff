"""The metrics reference (docs/reference/metrics.md), from the exporters themselves.

Every family `watch --metrics-port` (with `--lag`) and `canary --metrics-port` serve is
listed from their own registries (observe.sinks.metrics_groups.GROUP_FAMILIES, the watch's own
families, observe.sinks.lag_metrics, the canary's); each family's labels are read from a scrape
of a real exporter object fed a small example story (a classic and a consumer group that
rebalance, a lag read, two canary runs). A family the example leaves without a sample
stops the generator, so a new metric cannot be left out of the page, nor a renamed one
linger in it.
"""
from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

T0 = 1_700_000_000.0


@dataclass(frozen=True)
class MetricDoc:
    name: str          # as scraped (counters with `_total`)
    kind: str
    help: str
    labels: tuple[str, ...]
    source: str        # "watch", "watch --lag" or "canary"


def _ev(body: dict, group: str, at: float) -> dict:
    from ..events import envelope

    return envelope(body, group=group, cluster="c1", source="describe", at=at)


def _member(mid: str, asg, target=None) -> dict:
    return {"member_id": mid, "client_id": mid, "assignment": asg, "target_assignment": target}


def _watch_scrape() -> tuple[str, str]:
    """(the watch's text without lag, the text of the lag families and collector)."""
    from ..observe.sources.lag import GroupLag, LagPoller
    from ..observe.sinks.lag_metrics import add_lag_metrics
    from ..observe.sinks.metrics import WatchMetrics
    from ..observe.state.reducer import Reducer

    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: len(reducer.groups))

    def feed(e: dict) -> None:   # as watch does: the reducer folds first
        reducer.apply(e)
        metrics.event(e)

    t = [{"topic": "t", "partitions": [0, 1]}]
    feed(_ev({"event": "snapshot", "state": "Stable", "type": "classic", "protocol": "range",
              "generation": 3, "members": [_member("a", t)]}, "orders", T0))
    feed(_ev({"event": "rebalance", "from_generation": 3, "to_generation": 4,
              "duration_ms": 1500, "ended": "2023-11-14T22:13:25.000Z",
              "members_before": ["a"], "members_after": ["a", "b"],
              "reason": "member b (client b) joined", "unowned_partition_ms": 900,
              "unowned_basis": "upper_bound"}, "orders", T0 + 1))
    feed(_ev({"event": "snapshot", "state": "Reconciling", "type": "consumer",
              "protocol": "uniform", "group_epoch": 5, "assignment_epoch": 5,
              "members": [_member("c", [], t), _member("d", t, [])]}, "payments", T0))
    feed(_ev({"event": "rebalance", "from_generation": 4, "to_generation": 5,
              "duration_ms": 4200, "ended": "2023-11-14T22:13:25.000Z",
              "members_before": ["d"], "members_after": ["c", "d"],
              "reason": "member c (client c) joined", "unowned_partition_ms": 400,
              "unowned_basis": "measured", "slowest_member": "d",
              "slowest_member_ms": 4100, "slowest_member_held_ms": 4000}, "payments", T0 + 2))
    metrics.round_done(0.02, failed=False)
    plain = metrics.render()
    poller = LagPoller(None, lambda: [],  # type: ignore[arg-type]  # never run: its counts only
                       on_round=lambda at, reads: None)
    poller.rounds, poller.failed, poller.last_round_seconds = 3, 0, 0.02
    add_lag_metrics(metrics, poller)
    reducer.apply_lag(GroupLag("orders", T0, T0 + 0.5, {("t", 0): 40, ("t", 1): 2}))
    metrics.touch("orders")
    return plain, metrics.render()


def _canary_scrape() -> str:
    from ..coordinator.canary.metrics import CanaryMetrics
    from ..coordinator.canary.plan import Canary
    from ..coordinator.canary.rounds import RoundResult

    steps: dict[str, float | None] = {"find_coordinator": 1.0, "join": 8.0, "sync": 2.0,
                                      "heartbeat": 2.0, "leave": 2.0}
    ok = RoundResult(Canary("groupctl-canary-1-classic", "classic", 1, 0), 1, True, None, None,
                     steps, 15.0, T0, "m")
    failed = RoundResult(Canary("groupctl-canary-1-consumer", "consumer", 1, 0), 1, False,
                         "NOT_COORDINATOR", "heartbeat", {"find_coordinator": 1.0,
                                                          "heartbeat": None}, None, T0, "m")
    metrics = CanaryMetrics()
    metrics.run_done([ok, failed], "c1", {1})
    return metrics.render()


def _families(text: str, source: str, skip: frozenset[str] = frozenset()) -> list[MetricDoc]:
    out = []
    for family in text_string_to_metric_families(text):
        if family.name in skip:
            continue
        labels: set[str] = set()
        for sample in family.samples:
            labels |= set(sample.labels) - {"le"}
        name = family.name + ("_total" if family.type == "counter" else "")
        if not family.samples:
            raise SystemExit(f"docs: the example scrape has no sample of {name}: feed "
                             "groupctl.cli.docs_metrics's example story one")
        out.append(MetricDoc(name, family.type, family.documentation, tuple(sorted(labels)),
                             source))
    return out


def metric_docs() -> list[MetricDoc]:
    plain, with_lag = _watch_scrape()
    watch = _families(plain, "watch")
    lag = _families(with_lag, "watch --lag",
                    skip=frozenset(f.name.removesuffix("_total") for f in watch))
    return watch + lag + _families(_canary_scrape(), "canary")


def promql(m: MetricDoc) -> str:
    """An example query: what the family is most often asked."""
    by = next((label for label in ("group", "coordinator") if label in m.labels), None)
    keep = f" by ({by})" if by else ""
    if m.kind == "histogram":
        base = m.name
        inner = f"sum by (le{', ' + by if by else ''}) (rate({base}_bucket[1h]))"
        return f"histogram_quantile(0.95, {inner})"
    if m.kind == "counter":
        return f"sum{keep} (increase({m.name}[10m]))"
    if m.name.endswith("_timestamp_seconds"):
        return f"time() - {m.name}"
    if "state" in m.labels:
        return f'{m.name}{{state="Stable"}} == 1' if m.name.endswith("_state") else m.name
    return f"max{keep} ({m.name})"


def metrics_page() -> str:
    rows = []
    for m in metric_docs():
        labels = ", ".join(f"`{label}`" for label in m.labels) or "-"
        help_text = m.help.replace("|", "\\|").replace("<", "&lt;")
        rows.append(f"| `{m.name}` | {m.kind} | {labels} | {help_text} | `{m.source}` | "
                    f"`{promql(m).replace('|', chr(92) + '|')}` |")
    return "\n".join([
        "| metric | type | labels | meaning | served by | example PromQL |",
        "|---|---|---|---|---|---|", *rows])
