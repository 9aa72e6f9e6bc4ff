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

The frozen kinds are followed further (follow_after_exit): a thawed broker that the
controller fenced meanwhile unloads the group and loads it again from its last stored
generation, which may still list a member id the probe held and the broker had expired;
that reload can come after the probe has left (0.2-0.7 s after its exit here), so a
describe at once sees the member or not by chance. The group is described every 0.25 s
until one session timeout (+2 s) after the later of the exit and the broker's last
"Loaded classic group G" line since the thaw, and every groupctl member seen is paired
with that line and its "Member X in group G has failed" line. Verdicts per run: clean;
reloaded (each one seen came back with a reload after the exit and expired within one
session timeout of it: the promise, docs/commands/index.md); left-behind (still there
at the end); unexplained (groupctl's fault). Rows go to runs.jsonl (its path on stderr).

    PYTHONPATH=. python bench/leave_soak.py [--runs 100] [-b HOST:PORT]

Without -b it starts a one-node lab of its own (and stops it). Prints one line per kind:
runs, survivors (at once), exits seen, and for the frozen kinds the verdicts after the
exit. Exit 0: no survivor (frozen kinds: none left behind, none unexplained).
"""
from __future__ import annotations

import argparse
import collections
import datetime
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
SESSION_S = {"probe-frozen": 6.0}   # the member's session timeout (10 s: join's and
                                    # force-rebalance's default)
RECHECK_SLACK_S = 2.0   # a describe's round trip and the broker's expiry timer's tick


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


class BrokerLog:
    """The lab's server.log, read as it grows (from where the last read ended): the lines
    of the soak's groups, with the broker's own timestamps (local time, this machine)."""

    def __init__(self, path: Path):
        self.path, self.offset, self.lines = path, 0, []

    def read(self) -> list[tuple[float, str]]:
        with open(self.path, "rb") as f:
            if f.seek(0, 2) < self.offset:
                self.offset = 0   # rolled over
            f.seek(self.offset)
            chunk = f.read()
        whole = chunk[:chunk.rfind(b"\n") + 1]
        self.offset += len(whole)
        for raw in whole.decode(errors="replace").splitlines():
            if " soak-" in raw and raw.startswith("["):
                stamp = datetime.datetime.strptime(raw[1:24], "%Y-%m-%d %H:%M:%S,%f")
                self.lines.append((stamp.timestamp(), raw))
        return self.lines

    def times(self, text: str, since: float) -> list[float]:
        return [t for t, line in self.read() if t >= since and text in line]


def follow_after_exit(admin, group: str, log: BrokerLog, session: float,
                      at_once: list[str]) -> dict:
    """After a frozen broker's run: the group described every 0.25 s until one session
    timeout (+ slack) after the later of the probe's exit and the broker's last reload
    of the group ("Loaded classic group G") since the thaw. Every groupctl member id seen
    in that window is paired with the broker's log: the reload that brought it back and
    its expiry ("Member X in group G has failed"); `left_behind`: still there at the end."""
    exited, thawed = MARKS["exited"], MARKS.get("thawed", MARKS["exited"])
    seen = dict.fromkeys(at_once, MARKS["described"])
    while True:
        ids = groupctl_members(admin, group)
        now = time.time()
        for member in ids:
            seen.setdefault(member, now)
        loads = log.times(f"Loaded classic group {group} with", thawed)
        if now > max([exited, *loads]) + session + RECHECK_SLACK_S:
            break
        time.sleep(0.25)
    paired = {}
    for member, first in seen.items():
        before = [t for t in loads if t <= first]
        expired = log.times(f"Member {member} in group {group} has failed", thawed)
        loaded = before[-1] if before else None
        gone = [t for t in expired if loaded is None or t >= loaded]
        paired[member] = {
            "seen_s_after_exit": round(first - exited, 2),
            "reloaded_s_after_exit": None if loaded is None else round(loaded - exited, 2),
            "expired_s_after_reload": None if loaded is None or not gone
            else round(gone[0] - loaded, 2)}
    return {"loads_s_after_exit": [round(t - exited, 2) for t in loads], "seen": paired,
            "left_behind": ids}


def verdict(follow: dict, session: float) -> str:
    """`clean`: no groupctl member after the exit; `reloaded`: each one seen was brought
    back by a reload after the probe exited and expired within one session timeout of it;
    `left-behind`: one was still there; `unexplained`: any other (groupctl's fault)."""
    if follow["left_behind"]:
        return "left-behind"
    if not follow["seen"]:
        return "clean"
    ok = all(p["reloaded_s_after_exit"] is not None and p["reloaded_s_after_exit"] >= 0
             and p["expired_s_after_reload"] is not None
             and p["expired_s_after_reload"] <= session + RECHECK_SLACK_S
             for p in follow["seen"].values())
    return "reloaded" if ok else "unexplained"


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
MARKS: dict[str, float] = {}   # the last run's wall-clock moments, to pair with the broker log


def _mark(name: str) -> None:
    MARKS[name] = time.time()


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def freeze(lab, seconds: float, admin, group: str) -> None:
    """The lab's broker SIGSTOPped (seen stopped) for `seconds`, SIGCONTed, and back:
    it answers a describe of `group` again (a deadline, not a sleep, ends the wait)."""
    pid = lab.node(1).pid
    os.kill(pid, signal.SIGSTOP)
    _mark("frozen")
    try:
        deadline = time.monotonic() + 10
        while _state(pid) != "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(seconds)  # the fault itself: the broker's clock runs past the session
    finally:
        os.kill(pid, signal.SIGCONT)
        _mark("thawed")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            admin.describe_consumer_groups([group], request_timeout=10)[group].result(10)
            _mark("answered")
            return
        except Exception:  # noqa: BLE001 - not back yet
            time.sleep(0.2)


def run_one(kind: str, bootstrap: str, group: str, full: Path | None = None,
            lab=None, admin=None) -> int:
    MARKS.clear()
    _mark("spawned")
    if kind == "probe-frozen":
        proc = _spawn(bootstrap, ["--debug", "-o", "ndjson", "join", group, "--watch", "--yes",
                                  "--session-timeout", "6"])
        if _until_line(proc.stdout, '"event": "rebalance"'):
            freeze(lab, FROZEN_S[kind], admin, group)
            proc.send_signal(signal.SIGTERM)
            _mark("signalled")
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
        _mark("exited")
        LAST_ERR[0] = err or ""
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return -9
    if kind == "probe-error":  # (the others' stdout was partly read before the signal)
        JOINED[kind] += '"action": "joined"' in (out or "")
    return proc.returncode


def soak_kind(kind: str, runs: int, bootstrap: str, group: str, full, lab, admin,
              log: BrokerLog | None, runs_log: Path) -> dict:
    """`runs` runs of one kind; each row (moments, members, the broker log's pairing)
    appended to `runs_log`; one summary line printed."""
    exits, verdicts, t0 = collections.Counter(), collections.Counter(), time.monotonic()
    survivors = 0
    for _ in range(runs):
        exits[run_one(kind, bootstrap, group, full, lab, admin)] += 1
        left = groupctl_members(admin, group)   # at once, as the other kinds are checked
        MARKS["described"] = time.time()
        survivors += bool(left)
        row: dict = {"kind": kind, "group": group, "left_at_once": left, **MARKS}
        if log is not None and "exited" in MARKS:
            row["follow"] = follow_after_exit(admin, group, log, SESSION_S.get(kind, 10.0), left)
            row["verdict"] = verdict(row["follow"], SESSION_S.get(kind, 10.0))
            verdicts[row["verdict"]] += 1
        if left or row.get("verdict", "clean") != "clean":
            trace = Path(tempfile.mkdtemp(prefix="leave-soak-survivor-")) / "stderr"
            trace.write_text(LAST_ERR[0])
            row["trace"] = str(trace)
            print(f"  {kind}: at once {left}, {row.get('verdict')}: "
                  f"{json.dumps(row.get('follow'))} (its stderr: {trace})", file=sys.stderr)
        with open(runs_log, "a") as f:
            f.write(json.dumps(row) + "\n")
    result = {"runs": runs, "survivors": survivors, "exits": dict(exits),
              **({"after_exit": dict(verdicts)} if verdicts else {}),
              **({"joined": JOINED[kind]} if kind == "probe-error" else {}),
              "seconds": round(time.monotonic() - t0, 1)}
    print(f"{kind:16} runs {runs:4}  survivors {survivors}  exits {dict(exits)}  "
          + (f"after the exit {dict(verdicts)}  " if verdicts else "")
          + f"{result['seconds']} s"
          + (f"  joined before the error {JOINED[kind]}" if kind == "probe-error" else ""),
          flush=True)
    return result


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
    runs_log = Path(tempfile.mkdtemp(prefix="leave-soak-runs-")) / "runs.jsonl"
    print(f"runs: {runs_log}" + (f"; broker log: {lab.log_file}" if lab else ""),
          file=sys.stderr, flush=True)
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
            if kind == "probe-error" and full is None:
                continue
            if kind in FROZEN_S and lab is None:
                print(f"{kind}: needs the soak's own lab (no -b): skipped", file=sys.stderr)
                continue
            log = BrokerLog(lab.log_file) if kind in FROZEN_S else None
            results[kind] = soak_kind(kind, args.runs, bootstrap, group, full, lab, admin,
                                      log, runs_log)
            keeper.close()
    finally:
        if full is not None:
            subprocess.run(["umount", str(full)], check=False)
        if lab is not None:
            lab.down()
    print(json.dumps(results))
    return 0 if all(passed(k, r) for k, r in results.items()) else 1


def passed(kind: str, result: dict) -> bool:
    """control: every run a survivor; a frozen broker: no member left behind past one
    session timeout after the reload, none unexplained (a member only the reload brought
    back, after the exit, is the promise kept); the others: no survivor at all."""
    if kind.startswith("control"):
        return result["survivors"] == result["runs"]
    if kind in FROZEN_S:
        after = result.get("after_exit", {})
        return not after.get("left-behind") and not after.get("unexplained")
    return result["survivors"] == 0


if __name__ == "__main__":
    sys.exit(main())
