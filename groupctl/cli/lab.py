"""`groupctl lab`: a real local Kafka cluster (KRaft) and a workload of real consumers."""
from __future__ import annotations

from typing import Optional

import typer

from ..errors import UsageError
from .app import app
from .complete import complete_lab_names
from .env import BOOTSTRAP_ENV, env_of

lab_app = typer.Typer(
    name="lab", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
    help="A local real Apache Kafka 3.7-4.4 cluster (KRaft, 127.0.0.1) for experiments and tests, "
         "assembled from Maven Central jars (Java 17+ and Maven; cached under "
         "~/.cache/groupctl, or $GROUPCTL_CACHE) or from --kafka-home. Lab state lives in "
         "~/.cache/groupctl/lab/NAME ($GROUPCTL_LAB_HOME overrides).")
app.add_typer(lab_app, name="lab")

NAME_HELP = "Lab name: several labs can run side by side (default: default)."


def _env(ctx: typer.Context):
    return env_of(ctx)


def _parse_config(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--broker-config wants KEY=VALUE, not {item!r}")
        out[key.strip()] = value.strip()
    return out


def _status_table(console, data, wide: bool) -> None:
    from rich.table import Table

    console.print(f"lab {data['name']}: {data['state']}, {data['alive']}/{data['brokers']} "
                  f"node(s) alive, Kafka {data['kafka_version']}")
    console.print(f"bootstrap: {data['bootstrap']}")
    _sasl_lines(console, data.get("sasl"), wide)
    _tls_lines(console, data.get("sasl"), data.get("tls"), wide)
    table = Table(box=None, pad_edge=False)
    for col in ("NODE", "PID", "ALIVE", "ADDRESS") + (("CONTROLLER",) if wide else ()):
        table.add_column(col)
    for n in data["nodes"]:
        row = [str(n["node_id"]), str(n["pid"]), "yes" if n["alive"] else "no", n["address"]]
        table.add_row(*row, *([f"127.0.0.1:{n['controller_port']}"] if wide else []))
    console.print(table)
    # paths in full, one per line (a table would truncate them)
    for n in data["nodes"]:
        console.print(f"node {n['node_id']} log: {n['log_file']}", overflow="ignore", crop=False)
        if wide:
            console.print(f"node {n['node_id']} data: {n['data_dir']}", overflow="ignore", crop=False)
    if wide:
        console.print(f"libs: {data['libs']}", overflow="ignore", crop=False)
        console.print(f"state: {data['state_file']}", overflow="ignore", crop=False)


def _sasl_lines(console, sasl: dict | None, wide: bool) -> None:
    if not sasl:
        return
    console.print(f"sasl bootstrap: {sasl['bootstrap']} ({sasl['security_protocol']}, user "
                  f"{sasl['username']}, {', '.join(sasl['mechanisms'])})")
    configs = sasl["command_configs"] if wide else {"": sasl["command_config"]}
    for mech, path in configs.items():
        label = f"sasl command config{' ' + mech if mech else ''}"
        console.print(f"{label}: {path}", overflow="ignore", crop=False)
    guest = sasl.get("guest")
    if guest:
        configs = guest["command_configs"] if wide else {"": guest["command_config"]}
        for mech, path in configs.items():
            label = f"sasl command config{' ' + mech if mech else ''} (user {guest['username']}, no ACLs)"
            console.print(f"{label}: {path}", overflow="ignore", crop=False)


def _tls_lines(console, sasl: dict | None, tls: dict | None, wide: bool) -> None:
    if not tls:
        return
    console.print(f"ssl bootstrap: {tls['bootstrap']} (SSL, CA {tls['ca_file']})",
                  overflow="ignore", crop=False)
    console.print(f"ssl command config: {tls['command_config']}", overflow="ignore", crop=False)
    over_tls = (sasl or {}).get("sasl_ssl")
    if not over_tls or sasl is None:
        return
    console.print(f"sasl_ssl bootstrap: {over_tls['bootstrap']} (SASL_SSL)")
    for key, who in (("command_configs", sasl["username"]),
                     ("guest_command_configs", sasl.get("guest", {}).get("username"))):
        configs = over_tls[key]
        shown = configs if wide else {m: p for m, p in configs.items() if m == "SCRAM-SHA-512"}
        for mech, path in shown.items():
            console.print(f"sasl_ssl command config {mech} (user {who}): {path}",
                          overflow="ignore", crop=False)


@lab_app.command("up")
def up(
    ctx: typer.Context,
    brokers: int = typer.Option(1, "--brokers", help="Number of nodes: 1, or 3 (a 3-voter "
                                "controller quorum); each node is a combined broker+controller."),
    port: Optional[int] = typer.Option(None, "--port", help="The lab's first port: node N's "
                                       "client port is PORT+N-1, and every other listener "
                                       "(controller, then SASL, SSL, SASL_SSL) takes the "
                                       "next ports in turn, one per node (all must be free). "
                                       "Default: free ports are picked."),
    kafka_home: Optional[str] = typer.Option(None, "--kafka-home",
                                             help="Use this Kafka (3.7 or later) install's libs/ instead of Maven Central."),
    kafka_version: Optional[str] = typer.Option(None, "--kafka-version",
                                                help="Kafka version to fetch from Maven Central: 3.7.0 or later (default 4.4.0)."),
    name: str = typer.Option("default", "--name", help=NAME_HELP,
                                 autocompletion=complete_lab_names),
    broker_config: list[str] = typer.Option([], "--broker-config", metavar="KEY=VALUE",
                                            help="Extra server.properties setting (repeatable)."),
    sasl: bool = typer.Option(False, "--sasl", help="Also a SASL_PLAINTEXT listener: user "
                              "admin (a random password) for SCRAM-SHA-256, SCRAM-SHA-512 and "
                              "PLAIN; `lab status` names its bootstrap and the client "
                              "properties files for --command-config. Also user guest, "
                              "without any ACLs, and the standard authorizer (StandardAuthorizer): "
                              "try what a user without permissions sees."),
    tls: bool = typer.Option(False, "--tls", help="Also an SSL listener (with --sasl a "
                             "SASL_SSL one too): a CA and a broker certificate for "
                             "127.0.0.1/localhost are generated into the lab directory, with "
                             "client properties files (client-ssl.properties) for "
                             "--command-config and Kafka's own tools."),
):
    """Start a fresh lab cluster; returns once every broker answers ApiVersions and
    Metadata lists every broker (with --sasl: over SCRAM too)."""
    from ..lab.cluster import Lab

    env = _env(ctx)
    if kafka_home and kafka_version:
        raise UsageError("--kafka-home and --kafka-version exclude each other")
    start = env.monotonic()
    lab = Lab.up(name=name, brokers=brokers, port=port, kafka_home=kafka_home,
                 kafka_version=kafka_version, extra_config=_parse_config(broker_config),
                 sasl=sasl, tls=tls, progress=lambda msg: env.stderr.write(f"groupctl: lab: {msg}\n"))
    env.stderr.write(f"groupctl: lab: {name} is up in {env.monotonic() - start:.1f}s\n")
    _emit_status(env, lab)


def _emit_status(env, lab) -> None:
    from ..render.output import emit

    emit(env, lab.status(), _status_table)


@lab_app.command("status")
def status(ctx: typer.Context, name: str = typer.Option("default", "--name", help=NAME_HELP,
                                 autocompletion=complete_lab_names)):
    """Show the lab's nodes, pids, liveness, bootstrap address, log files and Kafka version."""
    from ..lab.cluster import Lab
    from ..lab.state import check_name

    env = _env(ctx)
    check_name(name)
    lab = Lab.load(name)
    if lab is None:
        raise UsageError(f"no lab named {name!r} is running (start one with `groupctl lab "
                         f"up{'' if name == 'default' else ' --name ' + name}`)")
    _emit_status(env, lab)


@lab_app.command("down")
def down(ctx: typer.Context, name: str = typer.Option("default", "--name", help=NAME_HELP,
                                 autocompletion=complete_lab_names),
         timeout: float = typer.Option(30.0, "--grace", help="Seconds to wait after SIGTERM "
                                       "before SIGKILL.")):
    """Stop the lab's Kafka processes (only those it started) and remove its state.
    server.log files stay until the next `lab up` of the same name."""
    from ..lab.cluster import down as lab_down

    env = _env(ctx)
    lab = lab_down(name, timeout=timeout)
    if lab is None:
        env.stderr.write(f"groupctl: lab: no lab named {name!r}; nothing to stop\n")
        return
    env.stderr.write(f"groupctl: lab: {name} stopped ({len(lab.nodes)} node(s)); "
                     f"logs kept in {lab.lab_dir}\n")


@lab_app.command("workload")
def workload(
    ctx: typer.Context,
    group: str = typer.Option(..., "--group", help="Consumer group id."),
    topic: str = typer.Option(..., "--topic", help="Topic (created if missing)."),
    consumers: int = typer.Option(3, "--consumers", help="Number of consumers."),
    partitions: Optional[int] = typer.Option(None, "--partitions",
                                             help="Partitions when creating the topic (default: --consumers)."),
    protocol: str = typer.Option("classic", "--protocol", help="classic or consumer (KIP-848)."),
    assignor: Optional[str] = typer.Option(None, "--assignor",
                                           help="range, roundrobin or cooperative-sticky (classic only; default range)."),
    churn: Optional[float] = typer.Option(None, "--churn", metavar="SECONDS",
                                          help="Every SECONDS one consumer leaves; at the next tick it rejoins."),
    duration: Optional[float] = typer.Option(None, "--duration", metavar="SECONDS",
                                             help="Stop after SECONDS (default: until Ctrl-C)."),
    rate: float = typer.Option(10.0, "--rate", help="Records per second the producer writes."),
    record: Optional[str] = typer.Option(None, "--record", metavar="FILE",
                                         help="Append assignment events and the rounds the members went through (ndjson) to FILE."),
    name: str = typer.Option("default", "--name", autocompletion=complete_lab_names,
                             help="Run on this lab (exit 2 with -b or --context). Without "
                                  "--name: the cluster every command uses (-b, --context, "
                                  "$GROUPCTL_BOOTSTRAP_SERVERS, the current context), else "
                                  "the lab `default`."),
):
    """Run real librdkafka consumers that join, consume and (with --churn) leave and rejoin,
    plus a producer writing a steady trickle. Assignments go to stderr; with -o ndjson also
    to stdout as events. Changes group membership of GROUP. The first line on stderr names
    the bootstrap servers it uses and where they came from."""
    import signal
    import threading

    from ..lab.workload import (
        ASSIGNORS, PROTOCOLS, check_options, client_properties, run_workload,
    )
    from ..render.output import NdjsonWriter

    env = _env(ctx)
    if protocol not in PROTOCOLS:
        raise UsageError(f"--protocol must be classic or consumer, not {protocol!r}")
    if assignor is not None and assignor not in ASSIGNORS:
        raise UsageError(f"--assignor must be one of {', '.join(ASSIGNORS)}, not {assignor!r}")
    check_options(consumers, partitions, protocol, assignor, churn, duration)
    bootstrap, security, source = _workload_cluster(ctx, env, name)
    record_file = _open_record(record)   # a bad path is exit 2 before any broker is asked
    _check_reachable(env, bootstrap, security, kip848=protocol == "consumer")
    env.stderr.write(f"groupctl: lab workload: bootstrap {bootstrap} (from {source})\n")
    env.stderr.flush()
    writers = []
    if record_file:
        writers.append(record_file)
    if env.settings.output == "ndjson":
        writers.append(NdjsonWriter(env.stdout))
    lock = threading.Lock()
    stop = threading.Event()
    failed: list[UsageError] = []  # the --record file could not be written (a full disk)

    def on_event(event: dict) -> None:  # on a consumer's thread: stop the workload instead
        with lock:
            try:
                for w in writers:
                    w.write(event)
            except UsageError as exc:
                failed.append(exc)
                writers.remove(record_file)
                stop.set()

    def log(line: str) -> None:
        with lock:
            env.stderr.write(line + "\n")
            env.stderr.flush()

    old = None
    if threading.current_thread() is threading.main_thread():
        old = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        summary = run_workload(bootstrap, group, topic, consumers, partitions, protocol,
                               assignor, churn, duration, rate, log=log, on_event=on_event,
                               on_round=on_event,
                               stop=stop, client_config=client_properties(security),
                               setup_timeout=env.settings.timeout)
    except KeyboardInterrupt:
        return 0  # run_workload closed every consumer on the way out
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
        if record_file:
            record_file.close()
    if failed:
        raise failed[0]
    if env.settings.output in ("json", "yaml"):
        from ..render.output import emit

        emit(env, summary)
    return 0


def _check_reachable(env, bootstrap: str, security, kip848: bool = False) -> None:
    """Bootstrap with groupctl's own client first: no broker reachable within --timeout is
    exit 3 with the message every command gives (librdkafka would retry quietly until its
    own timeouts, then fail without saying why). `kip848`: the workload's consumers use
    the consumer protocol; a broker without it is exit 7 now (librdkafka's consumers would
    wait for an assignment that never comes)."""
    from ..client.cluster import Cluster
    from ..client.errors import UnsupportedVersionError
    from ..observe.reads.snapshot import kip848_refusal
    from .common import run_async, tracer_for

    async def main():
        async with Cluster(bootstrap.split(","), security=security,
                           timeout=env.settings.timeout, trace=tracer_for(env)) as cluster:
            return await kip848_refusal(cluster) if kip848 else None

    refusal = run_async(env, main())
    if refusal:
        raise UnsupportedVersionError("ConsumerGroupHeartbeat",
                                      f"--protocol consumer: {refusal}")


def _workload_cluster(ctx: typer.Context, env, name: str):
    """(bootstrap, SecurityConfig, where it came from) for `lab workload`: an explicit
    --name is that lab; else the cluster every command resolves (cli.common); else the
    lab --name defaults to. Never a lab when the user configured a cluster: that lab may
    be someone else's."""
    from ..config import PLAINTEXT
    from .common import configured_cluster

    source = ctx.get_parameter_source("name")
    name_given = source is not None and source.name == "COMMANDLINE"
    if name_given and (env.settings.bootstrap_server is not None or env.settings.context):
        raise UsageError("--name runs on a lab; -b/--bootstrap-server and --context name "
                         "another cluster: give one of them")
    found = None if name_given else configured_cluster(env)
    if found is not None:
        servers, security, where = found
        return ",".join(servers), security, where
    where = f"lab {name!r}" if name_given else (
        f"lab {name!r}: no --name, -b, --context, ${BOOTSTRAP_ENV} or current context given")
    return _lab_bootstrap(name, name_given), PLAINTEXT, where


def _open_record(path: str | None):
    """--record FILE opened for appending before anything starts; a path that cannot be
    written is a usage error naming it."""
    from ..render.output import RecordFile

    return None if path is None else RecordFile(path)


def _lab_bootstrap(name: str, name_given: bool = True) -> str:
    from ..lab.cluster import Lab
    from ..lab.state import check_name

    check_name(name)
    lab = Lab.load(name)
    if lab is None:
        start = f"`groupctl lab up{'' if name == 'default' else ' --name ' + name}`"
        if name_given:
            raise UsageError(f"no lab named {name!r} is running (start one with {start})")
        raise UsageError(f"no cluster given (-b, --context, $GROUPCTL_BOOTSTRAP_SERVERS or a "
                         f"current context) and no lab named {name!r} is running ({start})")
    return lab.bootstrap
