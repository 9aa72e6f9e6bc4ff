"""`groupctl canary`: is each group coordinator healthy, as a consumer sees it? A group of
its own on every broker that coordinates groups, one full membership round per protocol,
each step timed; once (a table or JSON, the exit code says what failed) or on an interval
with Prometheus metrics (coordinator/canary/)."""
from __future__ import annotations

from typing import Optional

import typer

from ..errors import UsageError
from . import metrics_server_options
from .app import app
from .env import env_of

PROTOCOL_CHOICES = ("classic", "consumer")


@app.command("canary")
def canary_cmd(
    ctx: typer.Context,
    group_prefix: str = typer.Option("groupctl-canary-", "--group-prefix", metavar="PREFIX",
                                     help="The canary groups' names start with PREFIX "
                                     "(default groupctl-canary-)."),
    protocol: str = typer.Option("classic,consumer", "--protocol", metavar="classic,consumer",
                                 help="The protocols to run a round of (default both; "
                                 "consumer only where the brokers serve KIP-848)."),
    max_ms: Optional[float] = typer.Option(None, "--max-ms", metavar="MS",
                                           help="Exit 6 when a round took longer than MS "
                                           "milliseconds."),
    interval: Optional[float] = typer.Option(None, "--interval", metavar="S",
                                             help="Run the rounds every S seconds until "
                                             "--duration ends or Ctrl-C (exit 0)."),
    duration: Optional[float] = typer.Option(None, "--duration", metavar="S",
                                             help="With --interval: stop after S seconds."),
    metrics_port: Optional[int] = typer.Option(
        None, "--metrics-port", metavar="PORT", help="With --interval: serve Prometheus "
        "/metrics and /healthz on PORT (0: any free port, said on stderr)."),
    metrics_host: str = metrics_server_options.METRICS_HOST,
    web_config: Optional[str] = metrics_server_options.WEB_CONFIG,
):
    """Time what every consumer goes through, on every group coordinator.

    On each broker that coordinates groups (leads partitions of __consumer_offsets) a
    canary group of its own (PREFIX + protocol + broker + a counter, the first whose
    __consumer_offsets partition that broker leads), and on it one full membership round
    per protocol: classic FindCoordinator, JoinGroup (with the MEMBER_ID_REQUIRED round
    trip), SyncGroup, one Heartbeat, LeaveGroup; KIP-848 (where the brokers serve it)
    FindCoordinator, ConsumerGroupHeartbeat at member epoch 0, heartbeats until its
    assignment is acknowledged, the leave at epoch -1. Each step's latency and the
    round's, per coordinator and protocol; a round ends at its first error, named.

    Safe by construction: it joins only its own groups, subscribes to nothing real (classic:
    an empty subscription; KIP-848: 'groupctl:no-partitions'), never commits, never
    fetches, and leaves on every exit (Ctrl-C, SIGTERM, errors): its groups are Empty
    between rounds. It needs READ and DESCRIBE on groups with its prefix (a prefixed ACL),
    and DESCRIBE on topic groupctl:no-partitions for KIP-848 rounds under an authorizer.

    Once (the default): a table, or -o json (one object per coordinator and protocol);
    exit 0 when every round completed, 3 when a broker was unreachable, 4 not authorized,
    7 on a coordinator's error, 6 on a timeout or a round longer than --max-ms.
    --timeout is each round's deadline. With --interval S: a run every S seconds (rows as
    they come: -o json/ndjson one JSON line each), a line on stderr when a canary starts
    failing and when it completes again (on which coordinator, unavailable how long:
    from its first failed round to this one, exact to the interval; the JSON row of that
    round has unavailable_s, unavailable_since and previous_coordinator), until
    --duration or Ctrl-C / SIGTERM (exit 0). --metrics-port: histograms of each step and
    round per coordinator and protocol, failures by step and error, up per coordinator
    (groupctl_canary_*; a coordinator that stopped answering stays at 0 until the
    cluster's Metadata no longer lists it)."""
    from ..coordinator.canary.plan import PROTOCOLS
    from ..coordinator.canary.rounds import RoundSettings
    from ..coordinator.canary.runner import CanarySettings

    env = env_of(ctx)
    protocols = _protocols(protocol)
    if not group_prefix:
        raise UsageError("--group-prefix must not be empty")
    if max_ms is not None and not max_ms > 0:  # nan too
        raise UsageError("--max-ms must be positive")
    monitor = interval is not None
    if not monitor and (duration is not None or metrics_port is not None):
        raise UsageError("--duration and --metrics-port need --interval")
    if interval is not None and not interval > 0:
        raise UsageError("--interval must be positive")
    if duration is not None and not duration > 0:
        raise UsageError("--duration must be positive")
    metrics_server_options.check(metrics_port, web_config)
    timeout = env.settings.timeout
    settings = CanarySettings(
        prefix=group_prefix, protocols=tuple(p for p in PROTOCOLS if p in protocols),
        round=RoundSettings(timeout_s=timeout, leave_budget_s=min(5.0, timeout)))
    if monitor:
        assert interval is not None
        return _monitor(env, settings, interval, duration,
                        (metrics_host, metrics_port, web_config))
    return _once(env, settings, max_ms)


def _protocols(text: str) -> set[str]:
    names = {p.strip() for p in text.split(",") if p.strip()}
    wrong = names - set(PROTOCOL_CHOICES)
    if not names or wrong:
        raise UsageError(f"--protocol: choose from {', '.join(PROTOCOL_CHOICES)}"
                         + (f", not {', '.join(sorted(wrong))}" if wrong else ""))
    return names


def _notice(env):
    def notice(text: str) -> None:
        env.stderr.write(f"groupctl: canary: {text}\n")
        env.stderr.flush()
    return notice


def _once(env, settings, max_ms: float | None) -> int:
    from ..coordinator.canary.runner import CanaryRunner, raise_for
    from ..render.canary import canary_table
    from ..render.output import emit
    from .common import make_cluster, run_async

    async def main():
        async with make_cluster(env) as cluster:
            runner = CanaryRunner(cluster, settings, env.clock, notice=_notice(env))
            return await runner.once()

    # each round has its own deadline; the leaves after them are bounded too
    results = run_async(env, main(), timeout=None)
    emit(env, [r.to_dict() for r in results], canary_table)
    raise_for(results, max_ms)
    return 0


def _monitor(env, settings, interval: float, duration: float | None,
             metrics_at: tuple[str, int | None, str | None]) -> int:
    from ..coordinator.canary.metrics import CanaryMetrics
    from ..coordinator.canary.runner import CanaryRunner, Outcomes
    from ..render.canary import canary_table
    from ..render.output import NdjsonWriter
    from .common import make_cluster, run_async

    host, port, web_config = metrics_at
    server = None
    notice = _notice(env)
    if port is not None:
        server = metrics_server_options.bind(CanaryMetrics(), host, port, web_config)
    outcomes = Outcomes()
    rows_as_json = env.settings.output in ("json", "ndjson")
    writer = NdjsonWriter(env.stdout)

    async def main():
        async with make_cluster(env) as cluster:
            runner = CanaryRunner(cluster, settings, env.clock, notice=notice)

            def on_results(results) -> None:
                if server is not None:
                    server.metrics.run_done(results, runner.cluster_id,
                                            {n for n in runner.leaders.values() if n is not None},
                                            runner.brokers)
                for line in outcomes.tell(results):
                    notice(line)
                rows = [{**r.to_dict(), **(outcomes.ended[r.canary.group].to_dict()
                                           if r.canary.group in outcomes.ended else {})}
                        for r in results]
                if rows_as_json:
                    for row in rows:
                        writer.write(row)
                else:
                    canary_table(env.console(), rows, env.settings.output == "wide")
                    env.stdout.flush()

            if server is not None:
                server.start()
                for line in server.serving():
                    notice(line)
            await runner.monitor(interval, duration, on_results)

    try:
        run_async(env, main(), timeout=None, signal_stops_cleanly=True)
    finally:
        if server is not None:
            server.close()
    return 0
