"""cli.common.run_async and make_cluster: the outer --timeout deadline, SIGTERM/SIGINT as
Ctrl-C (with cleanup run first), the --debug protocol trace on stderr, and exit codes of
connection failures as the CLI reports them."""
from __future__ import annotations

import asyncio
import io
import os
import signal
import socket
import struct
import time

import pytest

from groupctl.cli.common import OUTER_GRACE, make_cluster, run_async
from groupctl.cli.env import Env, Settings
from groupctl.errors import DeadlineError, UnreachableError
from groupctl.exitcodes import ExitCode
from groupctl.protocol import frame
from groupctl.protocol.messages import API_VERSIONS, APIS


def env_with(**settings) -> Env:
    return Env(stdout=io.StringIO(), stderr=io.StringIO(), settings=Settings(**settings))


async def forever():
    await asyncio.Event().wait()


def test_outer_deadline_is_a_deadline_error():
    env = env_with(timeout=0.2)
    t0 = time.monotonic()
    with pytest.raises(DeadlineError, match="--timeout 0.2 s") as info:
        run_async(env, forever())
    assert 0.2 <= time.monotonic() - t0 < 0.2 + OUTER_GRACE + 1.0
    assert info.value.exit_code == ExitCode.TIMEOUT


def test_result_and_no_deadline():
    async def answer():
        return 42

    assert run_async(env_with(timeout=0.1), answer(), timeout=None) == 42


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_cancels_the_coroutine_then_ends_as_ctrl_c(signum):
    cleaned = []

    async def probe():
        try:
            os.kill(os.getpid(), signum)
            await forever()
        finally:
            await asyncio.sleep(0)  # cleanup may still await (a LeaveGroup, say)
            cleaned.append(True)

    from groupctl.errors import Interrupted

    before = signal.getsignal(signum)
    with pytest.raises(Interrupted):   # the CLI says it in one line, exit 130
        run_async(env_with(timeout=5), probe())
    assert cleaned == [True]
    assert signal.getsignal(signum) == before  # the previous handler is back


async def _tiny_broker():
    """Answers ApiVersions (every API at our versions) and nothing else."""
    async def serve(reader, writer):
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                data = await reader.readexactly(size)
                key, version, corr, _, _ = frame.decode_request_header(data)
                assert key == API_VERSIONS.key
                keys = [{"api_key": k, "min_version": a.min_version, "max_version": a.max_version}
                        for k, a in APIS.items()]
                writer.write(frame.encode_response(API_VERSIONS, version, corr,
                                                   {"error_code": 0, "api_keys": keys}))
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_debug_trace_goes_to_stderr():
    from groupctl.client import BrokerConnection

    async def main():
        server, port = await _tiny_broker()
        conn = await BrokerConnection("127.0.0.1", port).connect(5)  # tracer from context
        await conn.close()
        server.close()

    env = env_with(timeout=5, debug=True)
    run_async(env, main())
    err = env.stderr.getvalue()
    assert "groupctl: trace: ApiVersions v4 #0 127.0.0.1:" in err and " ms ok" in err

    quiet = env_with(timeout=5)
    run_async(quiet, main())
    assert quiet.stderr.getvalue() == ""


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_closed_port_through_make_cluster_is_exit_3(monkeypatch, tmp_path):
    monkeypatch.setenv("GROUPCTL_CONFIG", str(tmp_path / "none.yaml"))
    port = _closed_port()
    env = env_with(bootstrap_server=f"127.0.0.1:{port}", timeout=0.5)

    async def main():
        async with make_cluster(env) as cluster:
            await cluster.metadata()

    t0 = time.monotonic()
    with pytest.raises(UnreachableError) as info:
        run_async(env, main())
    assert time.monotonic() - t0 < 0.5 + OUTER_GRACE  # the cluster's own deadline fires first
    assert info.value.exit_code == ExitCode.UNREACHABLE
    assert f"127.0.0.1:{port}: connection refused" in str(info.value)
