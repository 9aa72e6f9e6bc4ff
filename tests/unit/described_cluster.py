"""The one fake cluster of the describe pipeline's unit tests (the poller, the Watcher,
the stories behind them): every describe goes through observe/reads/describe.py's
describe_groups, so the fake answers there, round by round.

    cluster = DescribedCluster([DescribeResult([desc]), UnreachableError("down"), ...])
    cluster.install(monkeypatch)        # describe_groups now answers from the rounds
    DescribePoller(cluster, ["g"])      # or Watcher(cluster, settings, emit=...)
    cluster.asked                       # [(groups asked, listings)] per round

A round is a DescribeResult, or an exception the round raises; after the last round the
last answer comes again (a group that stays as it was).
"""
from __future__ import annotations

DESCRIBE = "groupctl.observe.reads.describe.describe_groups"


class DescribedCluster:
    cluster_id = "fake"

    def __init__(self, rounds=()):
        self.rounds = list(rounds)
        self.asked: list[tuple[list[str], dict | None]] = []
        self.last = None

    def deadline(self, seconds=None):
        return None

    async def describe_groups(self, cluster, names, **options):
        self.asked.append((list(names), options.get("listings")))
        item = self.rounds.pop(0) if self.rounds else self.last
        self.last = item
        if isinstance(item, Exception):
            raise item
        return item

    def install(self, monkeypatch) -> DescribedCluster:
        monkeypatch.setattr(DESCRIBE, self.describe_groups)
        return self
