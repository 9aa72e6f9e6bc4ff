"""The lab's one question to a running cluster: which brokers does Metadata list?

Asked with groupctl's own client: bootstrap (TCP, ApiVersions, SASL when `security` says
so), then Metadata without topics. A cluster that answers both lists its brokers; one
that does not yet (a port not open, a broker still starting, a controller quorum not
formed) is "not ready", never an exception.
"""
from __future__ import annotations

import threading


def metadata_brokers(bootstrap: str, timeout: float = 2.0, security=None) -> list[int] | None:
    """Broker ids listed by a Metadata response from `bootstrap` ("h:p,h:p"), or None when
    no broker answered ApiVersions and Metadata within `timeout` seconds. `security`: a
    groupctl.config.SecurityConfig (default PLAINTEXT). Never raises for an unreachable or
    starting cluster."""
    import asyncio

    def ask() -> list[int] | None:
        return asyncio.run(_ask(bootstrap, timeout, security))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return ask()
    return _in_thread(ask)  # called from async code: leave its loop alone


async def _ask(bootstrap: str, timeout: float, security) -> list[int] | None:
    import asyncio

    from ..client.cluster import Cluster
    from ..errors import GroupctlError

    async def brokers() -> list[int]:
        async with Cluster([s for s in bootstrap.split(",") if s], timeout=timeout,
                           client_id="groupctl-lab", security=security,
                           request_timeout=timeout, connect_timeout=timeout) as cluster:
            return sorted((await cluster.metadata([])).brokers)

    try:
        return await asyncio.wait_for(brokers(), timeout)
    except (GroupctlError, OSError, asyncio.TimeoutError):
        return None


def secure_listeners_ready(lab, watched, want: set[int]) -> bool:
    """With `lab up --sasl` / `--tls`: each extra listener of the `watched` nodes (SASL
    with SCRAM as admin, SSL with the lab CA, SASL_SSL with both) lists every broker too."""
    from . import sasl as labsasl
    from . import tls as labtls

    host = "127.0.0.1"
    checks = []
    if lab.sasl:
        checks.append(("sasl_port", labsasl.security(lab.sasl)))
    if lab.tls:
        checks.append(("ssl_port", labtls.security(lab.tls)))
    if lab.tls and lab.sasl:
        checks.append(("sasl_ssl_port", labsasl.security(lab.sasl, tls=lab.tls)))
    for attr, security in checks:
        listed = metadata_brokers(",".join(f"{host}:{getattr(n, attr)}" for n in watched),
                                  timeout=2.0, security=security)
        if not want <= set(listed or ()):
            return False
    return True


def _in_thread(fn) -> list[int] | None:
    result: list = [None]

    def run() -> None:
        result[0] = fn()

    t = threading.Thread(target=run, name="groupctl-lab-ready", daemon=True)
    t.start()
    t.join()
    return result[0]
