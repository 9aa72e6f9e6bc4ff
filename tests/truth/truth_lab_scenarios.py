"""The scenarios that touch the whole lab (each runs in a wave of its own): a broker restart
mid-round, the coordinator's move on three brokers."""
from __future__ import annotations

import re

from truth_ground import log_lines


def _prepares(ctx) -> int:
    """Rounds begun: classic "Preparing to rebalance" lines, consumer epoch bumps."""
    if ctx.client == "848":
        return ctx.rounds()
    pattern = re.compile(rf"Preparing to rebalance group {re.escape(ctx.group)} ")
    return sum(1 for _, text in log_lines(ctx.lab) if pattern.search(text))


def broker_restart(ctx) -> None:
    """A third member joins; as soon as the broker has begun the round, it is restarted
    (the lab's only node: every witness loses contact)."""
    from waiting import wait_until

    a, b = ctx.consumer("a"), ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    begun = _prepares(ctx)
    c = ctx.consumer("c")
    wait_until(lambda: _prepares(ctx) > begun, 60, "the round begun in the broker log", interval=0.02)
    node = ctx.lab.nodes[0].node_id
    ctx.lab.stop_node(node)
    restart(ctx.lab, node)
    ctx.balanced([a, b, c], timeout=120)
    ctx.witnessed(3)
    ctx.close_all()


def coordinator_move(ctx) -> None:
    """Three brokers: the group's coordinator stops (the group moves to another node, its
    members follow), then starts again."""
    a, b = ctx.consumer("a"), ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    proc = ctx.lab.consumer_group_command("--describe", "--group", ctx.group, "--state")
    m = re.search(r"\((\d+)\)", proc.stdout)
    assert m, f"no coordinator in ConsumerGroupCommand's answer: {proc.stdout} {proc.stderr}"
    node = int(m.group(1))
    ctx.notes.append(f"coordinator {node} stopped")
    ctx.lab.stop_node(node)
    try:
        ctx.balanced([a, b], timeout=120)
        ctx.witnessed(2)
    finally:
        restart(ctx.lab, node)
    ctx.balanced([a, b], timeout=120)
    ctx.close_all()


def restart(lab, node: int) -> None:
    """Start a stopped node again from a scenario's thread, untied: `setpriv --pdeathsig`
    follows the thread that forked, which ends with the scenario (the lab's down stops it)."""
    lab.start_node(node, tie_to_parent=False)
