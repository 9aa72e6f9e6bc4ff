"""Capture seed corpora from real lab traffic (run by hand; the seeds are committed).

    PYTHONPATH=. python -m tests.fuzz.capture -b 127.0.0.1:PORT GROUP... [--out tests/fuzz/corpus]

Runs groupctl's own commands in process with --debug (list, describe of each GROUP and
--all in every output format, join as a classic and a KIP-848 probe, wait, watch for a
moment) against a lab broker (`groupctl lab up`, with `groupctl lab workload` groups
running), and records every response frame the connection decodes: the bytes the --debug
trace reports on, one line per exchange (client/trace.py prints no bytes, so capture.py
takes them where the trace takes the decoded body: BrokerConnection._decode).

Written seeds (at most PER_VERSION distinct frames per API version, FRAME_LIMIT bytes
each):
  responses/<api>-v<version>-<sha8>   [api key, version] + frame (targets_protocol.py)
  consumer/sub-<sha8>, asg-<sha8>, ud-<sha8>   member metadata / assignment / user data
      out of DescribeGroups and JoinGroup / SyncGroup responses (kind byte + payload)
"""
from __future__ import annotations

import argparse
import hashlib
import io
import os
from collections import defaultdict
from pathlib import Path

PER_VERSION = 4
FRAME_LIMIT = 8192   # the responses harness's -max_len
DERIVED_LIMIT = 4096

frames: dict[tuple[int, int], dict[bytes, None]] = defaultdict(dict)


def _hook() -> None:
    from groupctl.client.connection import BrokerConnection

    original = BrokerConnection._decode

    def recording(api, version, data):
        frames[(api.key, version)].setdefault(bytes(data), None)
        return original(api, version, data)

    BrokerConnection._decode = staticmethod(recording)


def _run(argv: list[str]) -> None:
    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    out, err = io.StringIO(), io.StringIO()
    code = invoke(["--debug", *argv], Env(stdout=out, stderr=err, environ=dict(os.environ)))
    traced = sum(1 for line in err.getvalue().splitlines() if "trace:" in line)
    print(f"exit {code:3}  {traced:3} traced exchanges  groupctl {' '.join(argv)}")


def _payloads(api_key: int, body: dict) -> list[tuple[int, bytes]]:
    """(kind byte, bytes) of consumer-protocol payloads in a decoded response."""
    found = []
    if api_key == 15:  # DescribeGroups
        for g in body.get("groups", []):
            if g.get("protocol_type") == "consumer":
                for m in g.get("members", []):
                    found.append((0, m["member_metadata"]))
                    found.append((1, m["member_assignment"]))
    elif api_key == 11:  # JoinGroup
        for m in body.get("members", []):
            found.append((0, m["metadata"]))
    elif api_key == 14:  # SyncGroup
        found.append((1, body.get("assignment") or b""))
    return [(k, bytes(b)) for k, b in found if b]


def _user_data(sub: bytes) -> bytes | None:
    from groupctl.protocol.consumer import decode_subscription

    try:
        return decode_subscription(sub).user_data
    except ValueError:
        return None


def write(out: Path) -> None:
    from groupctl.protocol.frame import decode_response
    from groupctl.protocol.messages import APIS

    resp, cons = out / "responses", out / "consumer"
    resp.mkdir(parents=True, exist_ok=True)
    cons.mkdir(parents=True, exist_ok=True)
    for (key, version), seen in sorted(frames.items()):
        api = APIS[key]
        for data in list(seen)[:PER_VERSION]:
            if len(data) > FRAME_LIMIT:
                continue
            sha = hashlib.sha1(data).hexdigest()[:8]
            (resp / f"{api.name}-v{version}-{sha}").write_bytes(bytes([key, version]) + data)
        for data in seen:
            try:
                body = decode_response(api, version, data)
            except ValueError:
                continue
            for kind, payload in _payloads(key, body):
                name = ("sub", "asg")[kind]
                # the kind byte's high bits pick the assignor (targets_protocol._ASSIGNORS)
                for assignor_bits in (0x00, 0x30):
                    seed = bytes([kind | assignor_bits]) + payload
                    (cons / f"{name}-{hashlib.sha1(seed).hexdigest()[:8]}").write_bytes(seed)
                ud = _user_data(payload) if kind == 0 else None
                if ud:
                    for bits in (0x20, 0x30):  # sticky, cooperative-sticky
                        seed = bytes([2 | bits]) + ud
                        (cons / f"ud-{hashlib.sha1(seed).hexdigest()[:8]}").write_bytes(seed)


def derive(out: Path) -> None:
    """Seeds for the versions and APIs the lab did not speak: each captured response
    decoded and re-encoded at every other version groupctl speaks (the real values in an
    older or newer layout), and an all-defaults body for an API never captured (the SASL
    ones without a SASL lab, Heartbeat)."""
    from groupctl.protocol.frame import decode_response, encode_response
    from groupctl.protocol.messages import APIS

    resp = out / "responses"
    bodies: dict[int, list[dict]] = defaultdict(list)
    for path in sorted(resp.iterdir()):
        data = path.read_bytes()
        if "-from-" in path.name or "-defaults" in path.name:
            continue
        api = APIS[data[0]]
        try:
            bodies[api.key].append(decode_response(api, data[1], data[2:]))
        except ValueError:
            continue
    for api in APIS.values():
        for version in range(api.min_version, api.max_version + 1):
            for i, body in enumerate((bodies.get(api.key) or [{}])[:1]):
                frame = encode_response(api, version, 7, body)[4:]
                tag = f"from-{i}" if api.key in bodies else "defaults"
                if len(frame) <= DERIVED_LIMIT:
                    (resp / f"{api.name}-v{version}-{tag}").write_bytes(
                        bytes([api.key, version]) + frame)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-b", "--bootstrap-server")
    ap.add_argument("groups", nargs="*")
    ap.add_argument("--derive-only", action="store_true",
                    help="only (re)write the derived seeds from the captured ones")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "corpus"))
    args = ap.parse_args()
    if args.derive_only:
        derive(Path(args.out))
        return
    if not args.bootstrap_server or not args.groups:
        ap.error("-b and at least one GROUP are needed to capture")
    _hook()
    b = ["-b", args.bootstrap_server]
    _run([*b, "list"])
    for fmt in ("table", "json"):
        _run([*b, "-o", fmt, "describe", "--all"])
    for g in args.groups:
        _run([*b, "-o", "json", "describe", g])
        _run([*b, "wait", g, "--state", "Stable", "--timeout", "5"])
    _run([*b, "describe", "fz-no-such-group"])
    _run([*b, "join", "fz-probe-classic", "--topics", "fz-t1", "--protocol", "classic"])
    _run([*b, "join", "fz-probe-848", "--topics", "fz-t2", "--protocol", "consumer"])
    for g in args.groups[:2]:
        _run([*b, "join", g, "--protocol", "classic", "--assignor", "cooperative-sticky"])
    _run([*b, "watch", "--all", "--duration", "3"])
    write(Path(args.out))
    derive(Path(args.out))
    print(f"{sum(len(v) for v in frames.values())} distinct frames over {len(frames)} "
          f"API versions")


if __name__ == "__main__":
    main()
