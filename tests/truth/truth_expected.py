"""The suite's seeded subset of the truth matrix, and what each of its cells is expected to
be: the one place to flip a cell when its defect is fixed.

SUBSET    the (scenario, client) pairs tests/truth/test_truth_matrix.py runs (one wave, all
          at once, under every witness)
EXPECTED  (scenario, client, witness) -> "ok" (agree, or cannot know with its reason) or
          a key of DEFECTS: that cell disagrees today (xfail, strict: it must keep
          disagreeing until the fix lands; then change it to "ok")
DEFECTS   key -> the defect, in the words of issue 30

A cell of the subset not in EXPECTED is not in the suite: its verdict today depends on
timing (where a describe look falls in a round; whether a records watch tells a KIP-848
group's first epoch): the bench shows it, tests/truth/README.md says why.
"""
from __future__ import annotations

DEFECTS = {
    "records-probe": "records replay: a zero-byte assignment (a probe, more members than "
                     "partitions) keeps a classic generation from Stable, so it is not told",
    "records-unowned": "unowned time from the records is the gap between generations, "
                       "not the round",
    "unknown-as-0": "an unknown duration is told or summed as 0 (watch summary, describe "
                    "round seen only at its end)",
    "describe-misses": "the describe watch (and its /metrics counter) misses or merges rounds",
    "records-first": "a records watch started before the group existed does not tell its "
                     "first generation/epoch",
    "probe-stale": "the KIP-848 probe's own view goes stale: its join's round told late, "
                   "in 0 ms",
    "epoch-no-move": "a KIP-848 epoch whose target moves no partition (a member with "
                     "nothing to get joins or leaves) is not told",
}

SUBSET = [
    ("join", "eager"), ("join", "848"), ("leave", "coop"), ("kill", "eager"), ("kill", "848"),
    ("probe", "eager"), ("probe", "848"), ("force-rebalance", "eager"),
    ("rejected-join", "eager"), ("static-restart", "848"), ("join", "java"),
    ("epoch-no-move", "848"),
]

OK = "ok"
EXPECTED: dict[tuple[str, str, str], str] = {
    ("join", "eager", "metrics"): OK,
    ("join", "848", "describe-0.5"): OK,
    ("join", "848", "describe-1"): OK,
    ("join", "848", "metrics"): OK,
    ("join", "848", "history"): OK,
    ("leave", "coop", "metrics"): OK,
    # a leaver's partitions go to another member in one generation: from the records, a
    # lower bound over its sync phase (it was 0 ms, measured)
    ("leave", "coop", "records"): OK,
    ("leave", "coop", "auto"): OK,
    ("leave", "coop", "history"): OK,
    ("kill", "eager", "metrics"): OK,
    ("kill", "eager", "history"): OK,
    ("kill", "eager", "records"): OK,
    ("kill", "eager", "auto"): OK,
    ("kill", "848", "history"): OK,
    ("probe", "eager", "probe"): OK,
    ("probe", "eager", "metrics"): OK,
    ("probe", "eager", "history"): OK,
    ("probe", "eager", "records"): OK,
    ("probe", "eager", "auto"): OK,
    ("probe", "848", "history"): OK,
    ("probe", "848", "metrics"): OK,
    # ("probe", "848", "probe"): out of the suite: its own state now follows its member
    # (agreed here), but an epoch bump with no assignment change still tells no event
    ("force-rebalance", "eager", "metrics"): OK,
    ("force-rebalance", "eager", "history"): OK,
    ("force-rebalance", "eager", "records"): OK,
    ("force-rebalance", "eager", "auto"): OK,
    ("rejected-join", "eager", "metrics"): OK,
    ("rejected-join", "eager", "records"): OK,
    ("rejected-join", "eager", "auto"): OK,
    ("static-restart", "848", "describe-0.5"): OK,
    ("static-restart", "848", "describe-1"): OK,
    ("static-restart", "848", "history"): OK,
    ("static-restart", "848", "metrics"): OK,
    # Kafka's own Java consumer (VerifiableConsumer, classic range)
    ("join", "java", "records"): OK,
    ("join", "java", "history"): OK,
    ("join", "java", "metrics"): OK,
    # KIP-848 epochs whose targets move nothing (a lone member's, then one of two's
    # subscription adds a missing topic): the records tell each at its epoch
    ("epoch-no-move", "848", "records"): OK,
    ("epoch-no-move", "848", "history"): OK,
}


def defects(expected: str) -> list[str]:
    """The defect keys of an EXPECTED value ("a+b": the cell agrees once both are fixed)."""
    return [] if expected == OK else expected.split("+")
