"""Bootstrap server lists: "h1:p1,h2:p2" syntax and its errors."""
from __future__ import annotations

import re

from ..errors import UsageError


def parse_bootstrap(text: str | list | None, what: str = "--bootstrap-server") -> list[str]:
    """"h1:p1,h2:p2" (or a list of such strings) -> ["h1:p1", "h2:p2"]; IPv6 hosts in
    brackets ("[::1]:9092"). UsageError on an empty list, a missing host or port, or a port
    outside 1-65535."""
    items = text if isinstance(text, list) else [text or ""]
    out: list[str] = []
    for item in items:
        for part in str(item if item is not None else "").split(","):
            part = part.strip()
            if not part:
                continue
            host, port = split_host_port(part, what)
            out.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    if not out:
        raise UsageError(f"{what} is empty: give HOST:PORT[,HOST:PORT...]")
    return list(dict.fromkeys(out))  # duplicates once, order kept


def split_host_port(server: str, what: str = "--bootstrap-server") -> tuple[str, int]:
    """("host", port) of one "host:port"; UsageError when it is not one."""
    m = re.fullmatch(r"\[([0-9A-Fa-f:.%\w]+)\]:(\S*)|([^\s:\[\]/]+):(\S*)", server)
    if not m:
        if "//" in server:
            hint = "expected HOST:PORT, without a scheme"
        elif ":" not in server:
            hint = "a port is missing"
        elif server.count(":") > 1 and "[" not in server:
            hint = "write IPv6 addresses in brackets, [::1]:9092"
        else:
            hint = "expected HOST:PORT"
        raise UsageError(f"{what}: bad server {server!r}: {hint}")
    host = m.group(1) or m.group(3)
    port_text = m.group(2) if m.group(1) else m.group(4)
    if "/" in port_text:
        raise UsageError(f"{what}: bad server {server!r}: expected HOST:PORT, without a scheme")
    # ASCII digits only: str.isdigit() also takes "²" or "١٢", which int() rejects or reads
    if not (port_text.isascii() and port_text.isdigit()) or not 1 <= int(port_text) <= 65535:
        raise UsageError(f"{what}: bad server {server!r}: the port must be a number "
                         f"from 1 to 65535")
    return host, int(port_text)
