"""Opening a broker's stream: TCP, or TLS when the security config asks for it, within a
timeout. Each way it can fail is one line naming the address and what to check
(UnreachableError); a failure that retrying the same address will not fix (TLS refused,
not Kafka) is marked permanent, so the cluster stops trying that address at once.
"""
from __future__ import annotations

import asyncio
import socket
import ssl

from ..config import SecurityConfig
from ..errors import DESCRIPTORS_ERRNOS, GroupctlError, OutOfDescriptors, UnreachableError
from .security import ssl_context, verify_hint


async def dial(host: str, port: int, security: SecurityConfig,
               timeout: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The connected (and TLS-handshaken) stream to host:port."""
    address = format_address(host, port)
    ctx = ssl_context(security) if security.tls else None
    try:
        return await asyncio.wait_for(asyncio.open_connection(
            host, port, ssl=ctx, server_hostname=host if ctx else None,
            ssl_handshake_timeout=timeout if ctx else None), timeout)
    except asyncio.TimeoutError:
        raise UnreachableError(f"{address}: no connection within {timeout:.1f} s") from None
    except ssl.SSLCertVerificationError as exc:
        why = exc.verify_message or exc.reason
        raise mark_permanent(UnreachableError(f"{address}: TLS handshake failed: "
                                              f"{why}{verify_hint(why)}")) from None
    except ssl.SSLError as exc:
        raise mark_permanent(UnreachableError(
            f"{address}: TLS handshake failed: {exc.reason or exc} (is it a TLS "
            "listener? check security.protocol)")) from None
    except socket.gaierror as exc:
        raise UnreachableError(f"{host}: cannot resolve the host name "
                               f"({exc.strerror or exc})") from None
    except ConnectionRefusedError:
        raise UnreachableError(f"{address}: connection refused") from None
    except (ConnectionError, OSError) as exc:
        if exc.errno in DESCRIPTORS_ERRNOS:   # no retry will help: said at once
            raise OutOfDescriptors.from_os_error(exc) from None
        why = exc.strerror or str(exc) or type(exc).__name__
        if ctx is not None:  # a plaintext listener drops a TLS ClientHello
            raise mark_permanent(UnreachableError(
                f"{address}: TLS handshake failed: {why} (a plaintext listener? "
                "check security.protocol)")) from None
        raise UnreachableError(f"{address}: {why}") from None


def format_address(host: str, port: int) -> str:
    """host:port, with an IPv6 host in brackets ([::1]:9092)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def mark_permanent(exc: GroupctlError) -> GroupctlError:
    """Mark an error that retrying the same address will not fix (not Kafka, TLS)."""
    exc.permanent = True
    return exc


def is_permanent(exc: BaseException) -> bool:
    return bool(getattr(exc, "permanent", False))
