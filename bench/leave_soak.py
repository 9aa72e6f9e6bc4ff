"""Issue 21: a member groupctl adds is gone after every way of stopping. N runs of each:

  probe-SIGTERM, probe-SIGINT   `join G --watch` signalled once its first rebalance is told
  probe-duration                `join G --watch --duration 1`
  probe-error                   `join G --watch --record FILE` on a filled 64 KiB tmpfs
                                (root: mount) with room for its first ~1200 bytes: the
                                record error (exit 2) comes a few events in; the runs whose
                                stdout told `joined` before it are counted (`joined`)
  force-SIGTERM, force-SIGINT   `force-rebalance G --yes` signalled while its JoinGroup is
                                parked (the test hook _GROUPCTL_PAUSE_AT=parked:30)
  probe-frozen                  `--debug join G --watch --session-timeout 6` (the broker's minimum): once
                                its first rebalance is told the broker is SIGSTOPped for 9 s
                                (past the session timeout), SIGCONTed, and the probe
                                SIGTERMed once the thawed broker answers a describe
  force-frozen                  `force-rebalance G --yes` with its JoinGroup parked (the hook,
                                12 s): the broker frozen 12 s (past force-rebalance's 10 s
                                session), thawed; force-rebalance left to end by itself
                                (only these two need the soak's own lab: not with -b)
  control-SIGKILL               (only with --kinds naming it) the probe SIGKILLed: it cannot
                                leave, so every run must count a survivor; proves the count
                                can see one

After each run: the exit code, and the group's members as librdkafka's AdminClient
describes them (ground truth groupctl did not write); a member whose id starts with
`groupctl-` is a survivor. One real librdkafka consumer keeps each group alive.

    PYTHONPATH=. python bench/leave_soak.py [--runs 100] [-b HOST:PORT]

Without -b it starts a one-node lab of its own (and stops it). Prints one line per kind:
runs, survivors, exits seen.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

KINDS = ["probe-SIGTERM", "probe-SIGINT", "probe-duration", "probe-error",
         "force-SIGTERM", "force-SIGINT", "probe-frozen", "force-frozen"]
FROZEN_S = {"probe-frozen": 9.0, "force-frozen": 12.0}


AGAIN = {14, 15, 16, -185, -195}   # load in progress, not available, not coordinator, timeouts


def groupctl_members(admin, group: str, timeout: float = 60) -> list[str]:
    """The group's groupctl members; a retriable answer (a thawed broker still loading
    the group: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) is asked again."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + timeout
    while True:
        try:
            desc = admin.describe_consumer_groups([group], request_timeout=30)[group].result(30)
            return [m.member_id for m in desc.members if m.member_id.startswith("groupctl-")]
        except KafkaException as exc:
            if exc.args[0].code() not in AGAIN or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _spawn(bootstrap: str, argv: list[str], env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "groupctl", "-b", bootstrap, *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "NO_COLOR": "1", **(env or {})},
                            stdin=subprocess.DEVNULL)


def _until_line(stream, marker: str, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            return False
        if marker in line:
            return True
    return False


def _full_record(directory: Path, room: int = 1200) -> Path:
    """A record file in `directory` (a 64 KiB tmpfs) whose page has `room` bytes left,
    every other page taken."""
    for p in directory.iterdir():
        p.unlink()
    record = directory / "events.ndjson"
    record.write_bytes(b"x" * (4095 - room) + b"\n")
    with open(directory / ".filler", "wb", buffering=0) as f:
        while True:
            try:
                f.write(b"\0" * 4096)
            except OSError:
                break
    return record


JOINED: collections.Counter = collections.Counter()
LAST_ERR = [""]   # the last run's stderr (its --debug trace, for a survivor's post-mortem)


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def freeze(lab, seconds: float, admin, group: str) -> None:
    """The lab's broker SIGSTOPped (seen stopped) for `seconds`, SIGCONTed, and back:
    it answers a describe of `group` again (a deadline, not a sleep, ends the wait)."""
    pid = lab.node(1).pid
    os.kill(pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 10
        while _state(pid) != "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(seconds)  # the fault itself: the broker's clock runs past the session
    finally:
        os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            admin.describe_consumer_groups([group], request_timeout=10)[group].result(10)
            return
        except Exception:  # noqa: BLE001 - not back yet
            time.sleep(0.2)


def run_one(kind: str, bootstrap: str, group: str, full: Path | None = None,
            lab=None, admin=None) -> int:
    if kind == "probe-frozen":
        proc = _spawn(bootstrap, ["--debug", "-o", "ndjson", "join", group, "--watch", "--yes",
                                  "--session-timeout", "6"])
        if _until_line(proc.stdout, '"event": "rebalance"'):
            freeze(lab, FROZEN_S[kind], admin, group)
            proc.send_signal(signal.SIGTERM)
    elif kind == "force-frozen":
        from groupctl.cli.steer import PAUSE_ENV

        proc = _spawn(bootstrap, ["--debug", "force-rebalance", group, "--yes"],
                      env={PAUSE_ENV: "parked:12"})
        if _until_line(proc.stderr, "force-rebalance: parked"):
            freeze(lab, FROZEN_S[kind], admin, group)
    elif kind.startswith("probe-"):
        extra = {"probe-duration": ["--duration", "1"]}.get(kind, [])
        if kind == "probe-error":
            extra = ["--record", str(_full_record(full))]
        proc = _spawn(bootstrap, ["-o", "ndjson", "join", group, "--watch", "--yes", *extra])
        if kind in ("probe-SIGTERM", "probe-SIGINT") and \
                _until_line(proc.stdout, '"event": "rebalance"'):
            proc.send_signal(signal.SIGTERM if kind.endswith("TERM") else signal.SIGINT)
    elif kind == "control-SIGKILL":
        proc = _spawn(bootstrap, ["-o", "ndjson", "join", group, "--watch", "--yes"])
        if _until_line(proc.stdout, '"event": "rebalance"'):
            proc.send_signal(signal.SIGKILL)
    else:
        from groupctl.cli.steer import PAUSE_ENV

        proc = _spawn(bootstrap, ["--debug", "force-rebalance", group, "--yes"],
                      env={PAUSE_ENV: "parked:30"})
        if _until_line(proc.stderr, "force-rebalance: parked"):
            proc.send_signal(signal.SIGTERM if kind.endswith("TERM") else signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=90)
        LAST_ERR[0] = err or ""
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return -9
    if kind == "probe-error":  # (the others' stdout was partly read before the signal)
        JOINED[kind] += '"action": "joined"' in (out or "")
    return proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("-b", "--bootstrap-server")
    ap.add_argument("--kinds", default=",".join(KINDS))
    args = ap.parse_args()
    from confluent_kafka.admin import AdminClient

    from groupctl.lab.consumer import LabConsumer
    from groupctl.lab.workload import create_topic

    lab = None
    bootstrap = args.bootstrap_server
    if bootstrap is None:
        from groupctl.lab.cluster import Lab

        lab = Lab.up(name=f"leave-soak-{os.getpid()}", brokers=1,
                     root=Path(tempfile.mkdtemp(prefix="leave-soak-")), tie_to_parent=True)
        bootstrap = lab.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    results = {}
    full = Path(tempfile.mkdtemp(prefix="leave-soak-full-"))
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(full)],
                      check=False).returncode != 0:
        print("cannot mount a tmpfs: probe-error skipped", file=sys.stderr)
        full = None
    try:
        for kind in args.kinds.split(","):
            group = f"soak-{kind.lower()}-{uuid.uuid4().hex[:6]}"
            topic = f"t-{group}"
            create_topic(bootstrap, topic, 2)
            keeper = LabConsumer(bootstrap, group, [topic], name=f"{group}-keeper",
                                 config={"heartbeat.interval.ms": 3000}).start()
            keeper.wait_assigned(timeout=60)
            exits, survivors, t0 = collections.Counter(), 0, time.monotonic()
            if kind == "probe-error" and full is None:
                continue
            if kind in FROZEN_S and lab is None:
                print(f"{kind}: needs the soak's own lab (no -b): skipped", file=sys.stderr)
                continue
            for _ in range(args.runs):
                exits[run_one(kind, bootstrap, group, full, lab, admin)] += 1
                left = groupctl_members(admin, group)
                survivors += bool(left)
                if left:
                    trace = Path(tempfile.mkdtemp(prefix="leave-soak-survivor-")) / "stderr"
                    trace.write_text(LAST_ERR[0])
                    print(f"  {kind}: survivor {left} (its stderr: {trace})", file=sys.stderr)
            keeper.close()
            results[kind] = {"runs": args.runs, "survivors": survivors, "exits": dict(exits),
                             **({"joined": JOINED[kind]} if kind == "probe-error" else {}),
                             "seconds": round(time.monotonic() - t0, 1)}
            print(f"{kind:16} runs {args.runs:4}  survivors {survivors}  exits "
                  f"{dict(exits)}  {results[kind]['seconds']} s"
                  + (f"  joined before the error {JOINED[kind]}" if kind == "probe-error" else ""),
                  flush=True)
    finally:
        if full is not None:
            subprocess.run(["umount", str(full)], check=False)
        if lab is not None:
            lab.down()
    print(json.dumps(results))
    return 0 if all(r["survivors"] == (r["runs"] if k.startswith("control") else 0)
                    for k, r in results.items()) else 1


if __name__ == "__main__":
    sys.exit(main())
