"""A hostile broker (an in-process fake, test_client.FakeBroker) against the real CLI in a
subprocess: answers built to blow up memory, and the exit codes of what it sends."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading

import pytest
from test_client import FakeBroker

from groupctl.protocol import frame
from groupctl.protocol.messages import LIST_GROUPS

BROKERS = 12   # advertised in Metadata, every one this same fake


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _list_groups_frame(version: int, count: int) -> bytes:
    """A ListGroups response of `count` one-letter groups (9 bytes each on the wire),
    spliced from the real encoder's frames of 1 and 3 groups."""
    def enc(n):
        groups = [{"group_id": "g", "protocol_type": "", "group_state": "S",
                   "group_type": "c"}] * n
        return frame.encode_response(LIST_GROUPS, version, 0,
                                     {"error_code": 0, "groups": groups})[4:]
    one, three = enc(1), enc(3)
    size = (len(three) - len(one)) // 2
    prefix = next(i for i in range(len(one)) if one[i] != three[i])
    entry, suffix = one[prefix + 1:prefix + 1 + size], one[prefix + 1 + size:]
    body = one[:prefix] + _uvarint(count + 1) + entry * count + suffix
    check = body[:prefix] + _uvarint(3) + entry * 2 + suffix
    assert len(frame.decode_response(LIST_GROUPS, version, check)["groups"]) == 2
    return len(body).to_bytes(4, "big") + body


class HostileCluster:
    """A fake broker on a thread of its own, advertising BROKERS brokers (all itself)."""

    def __init__(self, answer):
        self.answer = answer
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.broker = FakeBroker(versions=None)
        self.loop.run_until_complete(self.broker.start())
        clones = [FakeBroker(node_id=i + 1) for i in range(BROKERS)]
        for c in clones:
            c.port = self.broker.port
        self.broker.cluster = clones
        self.broker.handlers[LIST_GROUPS.key] = self.answer
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> HostileCluster:
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _run_cli(port: int, *args: str) -> tuple[int, str, str, int]:
    """groupctl in a subprocess under a 4 GB address-space limit (so the old behaviour
    fails with MemoryError instead of taking the machine): (exit code, stdout, stderr,
    its max RSS in MB, from getrusage in a parent of its own)."""
    wrapper = (
        "import resource, subprocess, sys, json\n"
        "def limit():\n"
        "    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True, preexec_fn=limit)\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024\n"
        "print(json.dumps([p.returncode, p.stdout, p.stderr, rss]))\n")
    cmd = [sys.executable, "-c", wrapper, sys.executable, "-m", "groupctl",
           "-b", f"127.0.0.1:{port}", "--timeout", "30", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1"})
    return tuple(json.loads(done.stdout))


@pytest.fixture(scope="module")
def huge_list_groups():
    frames: dict[int, bytes] = {}

    def answer(req):
        if req.version not in frames:
            frames[req.version] = _list_groups_frame(req.version, 2_200_000)   # ~20 MB
        data = frames[req.version]
        return data[:4] + req.corr.to_bytes(4, "big") + data[8:]
    return answer


def test_a_hostile_list_groups_answer_is_refused_in_bounded_memory(huge_list_groups):
    """Twelve advertised brokers each answering ListGroups with 2.2 million groups in
    20 MB: before, each decoded into ~1.5 GB of Python objects, all held at once."""
    with HostileCluster(huge_list_groups) as cluster:
        code, out, err, rss = _run_cli(cluster.broker.port, "list", "-o", "json")
    assert code == 3, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "more array elements than groupctl decodes" in err, err
    assert rss < 600, f"max RSS {rss} MB"

