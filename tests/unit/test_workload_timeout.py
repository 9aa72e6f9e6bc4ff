"""`create_topic` against a peer that never answers ends at its timeout with a DeadlineError
(exit 6), not concurrent.futures' bare TimeoutError (an internal error, exit 1)."""
from __future__ import annotations

import socket
import time

import pytest

from groupctl.errors import DeadlineError
from groupctl.exitcodes import ExitCode
from groupctl.lab.workload import create_topic


def test_create_topic_on_a_silent_peer_is_a_deadline_error():
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        t0 = time.monotonic()
        with pytest.raises(DeadlineError, match="no answer from") as info:
            create_topic(f"127.0.0.1:{port}", "t", timeout=1.0)
        assert time.monotonic() - t0 < 10  # librdkafka's own 1 s, plus its shutdown
        assert info.value.exit_code == ExitCode.TIMEOUT
