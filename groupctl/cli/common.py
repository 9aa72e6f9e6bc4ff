"""What every command that talks to a cluster shares: where the brokers are, how to reach
them, and how to run the asyncio part of a command.

Which brokers, and with which security settings (first match wins):

    bootstrap   -b/--bootstrap-server; else the bootstrap_servers of --context NAME; else
                $GROUPCTL_BOOTSTRAP_SERVERS; else those of current_context in the contexts
                file; else a UsageError (exit 2) saying so.
    security    --command-config FILE; else the context's command_config/properties (the
                context named by --context, or current_context when the brokers came from
                it); else PLAINTEXT. A current_context never lends its credentials to
                brokers named with -b or $GROUPCTL_BOOTSTRAP_SERVERS.

run_async(env, coro): runs the command's coroutine with --timeout as an outer deadline
(plus one second of grace, so that the operation's own deadline, which says what was not
done, fires first) -> DeadlineError (exit 6). SIGINT and SIGTERM cancel the coroutine (so
`finally` blocks run: a probe leaves its group) and then end the command as Ctrl-C does
(Interrupted: "groupctl: interrupted", exit 130); a second signal stops at once. Under --debug the protocol
trace goes to env.stderr.
"""
from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from .. import config, startup
from ..config import PLAINTEXT, SecurityConfig, parse_bootstrap
from ..errors import DeadlineError, Interrupted, UsageError
from .env import BOOTSTRAP_ENV

if TYPE_CHECKING:  # pragma: no cover - imported on use (start-up time)
    from ..client.cluster import Cluster

__all__ = [
    "OUTER_GRACE",
    "configured_cluster",
    "connection_settings",
    "make_cluster",
    "parse_bootstrap",
    "run_async",
    "tracer_for",
]

OUTER_GRACE = 1.0
_DEFAULT: Any = object()


def connection_settings(env) -> tuple[list[str], SecurityConfig]:
    """(bootstrap servers, SecurityConfig) for this command; UsageError when there are no
    brokers to talk to or a setting is malformed."""
    found = configured_cluster(env)
    if found is None:
        raise UsageError(
            "no brokers to talk to: give -b/--bootstrap-server HOST:PORT[,HOST:PORT], set "
            f"{BOOTSTRAP_ENV}, or use a context (--context NAME, or current_context in "
            f"{env.config_path})")
    bootstrap, security, _ = found
    return bootstrap, security


def configured_cluster(env) -> tuple[list[str], SecurityConfig, str] | None:
    """(bootstrap servers, SecurityConfig, where the brokers came from) in the order of the
    module doc, or None when nothing names any brokers (`lab workload` then uses a lab)."""
    s = env.settings
    ctx = config.load_contexts(env.config_path).get(s.context) if s.context else None

    if s.bootstrap_server is not None:
        bootstrap = parse_bootstrap(s.bootstrap_server, "--bootstrap-server")
        source = "-b/--bootstrap-server"
    elif ctx is not None:
        bootstrap = _context_bootstrap(ctx)
        source = f"--context {ctx.name}"
    elif env.bootstrap_env is not None:
        bootstrap = parse_bootstrap(env.bootstrap_env, BOOTSTRAP_ENV)
        source = f"${BOOTSTRAP_ENV}"
    else:
        contexts = config.load_contexts(env.config_path)  # only now: -b needs no contexts file
        if not contexts.current_context:
            return None
        ctx = contexts.get(contexts.current_context)
        bootstrap = _context_bootstrap(ctx)
        source = f"current context {ctx.name!r} in {env.config_path}"

    if s.command_config:
        security = config.load_command_config(s.command_config)
    elif ctx is not None:
        security = ctx.security()
    else:
        security = PLAINTEXT
    if security.tls and not security.ssl_verify and not env.said_unverified_tls:
        env.said_unverified_tls = True   # once a run, however many clusters it makes
        env.warn(UNVERIFIED_TLS.format(where=security.source or source))
    return bootstrap, security, source


# said on every run whose TLS settings turn the certificate check off (librdkafka's property;
# Kafka's Java tools ignore it, so a properties file safe with them is not safe here)
UNVERIFIED_TLS = ("enable.ssl.certificate.verification=false ({where}): the brokers' TLS "
                  "certificates are not checked, so anyone on the network path can pose as "
                  "a broker and read what groupctl sends, SASL passwords included")


def _context_bootstrap(ctx) -> list[str]:
    if not ctx.bootstrap_servers:
        raise UsageError(f"context {ctx.name!r} has no bootstrap_servers")
    return list(ctx.bootstrap_servers)


def tracer_for(env):
    """The protocol tracer for this command: one on env.stderr under --debug (made once,
    kept on env), else None."""
    if not env.settings.debug:
        return None
    if env.tracer is None:
        from ..client.trace import Tracer

        from ..render.visible import visible

        env.tracer = Tracer(env.stderr, shown=visible)
    return env.tracer


def make_cluster(env, **kwargs) -> Cluster:
    """A groupctl.client.Cluster for this command's brokers, security settings, --timeout
    and --debug trace (kwargs go to Cluster). Use it inside run_async's coroutine:
    `async with make_cluster(env) as cluster: ...`."""
    from ..client.cluster import Cluster

    bootstrap, security = connection_settings(env)
    kwargs.setdefault("timeout", env.settings.timeout)
    kwargs.setdefault("trace", tracer_for(env))
    if env.stderr_is_terminal:  # a person waits: say what is retried (scripts get silence)
        kwargs.setdefault("on_slow_bootstrap", lambda servers, seconds, why: _say_retrying(
            env, servers, seconds, why))
    return Cluster(bootstrap, security=security, **kwargs)


def _say_retrying(env, servers: list[str], seconds: float, why: str | None = None) -> None:
    """Once: the first failure as it is (a refused connection at once), or that nothing
    answered yet; and how long groupctl goes on trying."""
    if why is None:
        text = f"connecting to {','.join(servers)} (no answer yet; retrying"
    else:
        text = f"{why} (retrying"
    env.note(f"groupctl: {text} for up to {seconds:g} s) ...")


class _Box:
    """The command's result, handed out of asyncio.run with a repr that costs nothing:
    on its way out asyncio.run (3.11) looks up its SIGINT handler, a partial naming the
    main task, and Python's signal module formats that handler's repr on the way, which
    writes the task's result in full: 1.5 s for a `describe --all` of 20,000 groups."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return "<result>"


def run_async(env, coro: Awaitable, *, timeout: float | None = _DEFAULT,
              signal_stops_cleanly: bool = False) -> Any:
    """Run `coro` to completion and return its result (see the module doc). `timeout`:
    seconds for the outer deadline (default --timeout), None for none (watch commands).
    `signal_stops_cleanly`: for watch commands, where Ctrl-C / SIGTERM is the normal way to
    stop (docs/reference/exit-codes.md: exit 0): once the coroutine has finished its cleanup,
    return None instead of raising Interrupted."""
    limit = env.settings.timeout if timeout is _DEFAULT else timeout
    tracer = tracer_for(env)

    async def main():
        if tracer is not None:
            from ..client.trace import use_tracer
            use_tracer(tracer)
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None  # run() is inside the event loop's task
        signalled: list[int] = []

        def on_signal(signum: int) -> None:
            if signalled:  # the second signal: stop now, cleanup or not
                raise KeyboardInterrupt
            signalled.append(signum)
            task.cancel()

        installed = []  # (signal, the handler before ours)
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                before = signal.getsignal(signum)
                loop.add_signal_handler(signum, on_signal, signum)
                installed.append((signum, before))
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
                pass
        started = loop.time()
        try:
            if limit is None:
                return await coro
            return await asyncio.wait_for(coro, limit + OUTER_GRACE)
        except asyncio.TimeoutError:
            if limit is None or loop.time() - started < limit:
                raise  # a timeout of the command's own, not ours
            raise DeadlineError(f"not done within --timeout {limit:g} s") from None
        except asyncio.CancelledError:
            if signalled:
                if signal_stops_cleanly:
                    return None
                # not KeyboardInterrupt: click would end the command with a silent 130
                raise Interrupted("interrupted") from None
            raise
        finally:
            for signum, before in installed:
                loop.remove_signal_handler(signum)
                if before is not None:
                    signal.signal(signum, before)

    async def boxed() -> _Box:
        return _Box(await main())

    startup.release()  # the command has imported what it needs (see groupctl.startup)
    try:
        return asyncio.run(boxed()).value
    finally:
        if asyncio.iscoroutine(coro):
            coro.close()  # never started (e.g. asyncio.run failed): no "never awaited" warning
