"""The metrics server's options, checks and binding, shared by `watch` and `canary`: one
declaration of --metrics-host and --web-config, one check, one way to bind."""
from __future__ import annotations

from typing import Optional

import typer

from ..errors import UsageError

METRICS_HOST = typer.Option(
    "127.0.0.1", "--metrics-host", metavar="HOST",
    help="With --metrics-port: the address to listen on (default 127.0.0.1; 0.0.0.0 for "
    "every interface: then give --web-config).")
WEB_CONFIG: Optional[str] = typer.Option(
    None, "--web-config", metavar="FILE", help="With --metrics-port: TLS and basic "
    "authentication of the metrics server from a Prometheus web configuration file "
    "(exporter-toolkit's format: tls_server_config cert_file/key_file, basic_auth_users "
    "with bcrypt hashes).")


def check(port: int | None, web_config: str | None) -> None:
    """UsageError for a port out of range, or --web-config without a port."""
    if port is not None and not 0 <= port <= 65535:
        raise UsageError("--metrics-port must be 0..65535")
    if web_config is not None and port is None:
        raise UsageError("--web-config needs --metrics-port")


def bind(metrics, host: str, port: int, web_config: str | None):
    """A MetricsServer of `metrics` bound now (a port that cannot be bound: exit 2)."""
    from ..observe.sinks.metrics_server import MetricsServer
    from ..observe.sinks.web_config import load

    return MetricsServer(metrics, host, port, None if web_config is None else load(web_config))
