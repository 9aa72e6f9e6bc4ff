"""`groupctl decode records` against Kafka's own decoder, `kafka.tools.DumpLogSegments
--offsets-decoder --print-data-log`, on the same __consumer_offsets segment files, in one
run.

Workload (generated into a temp dir, not committed): segment files of RECORDS records in
record batches v2 of BATCH records each, as a busy coordinator writes them: per 100
records, 95 OffsetCommit v4 (with the tagged topic id) and 5 group records (GroupMetadata
v3 with two consumer members, ConsumerGroupMetadata, ConsumerGroupMemberMetadata,
ConsumerGroupTargetAssignmentMember, ConsumerGroupCurrentMemberAssignment); optionally
compressed (--codec). Both sides must report the same number of records.

Rows (wall time, the minimum of --repeat runs, output to a file on tmpfs or disk):
  kafka      java -cp 'libs/*' kafka.tools.DumpLogSegments ... (JVM start included)
  groupctl   python -m groupctl -o ndjson decode records FILE...   ratio groupctl / kafka
                                                                   (target <= 1.0)

    .venv/bin/python bench/records_decode.py [--records 1000000] [--codec none] [--repeat 1]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # tests/: the spec encoder

from groupctl.lab import dist  # noqa: E402
from tests.spec_encoder import compile_encoder  # noqa: E402
from groupctl.protocol.records.batch import encode_batch  # noqa: E402
from groupctl.protocol.records.compression import CODECS  # noqa: E402
from groupctl.protocol.records.schemas import RECORD_TYPES  # noqa: E402
from groupctl.protocol.types import Writer  # noqa: E402

TOPIC_ID = "JOjphzW4SaiJtRd4hoi-lA"
SEGMENT_RECORDS = 250_000       # records per segment file


def key_bytes(rtype: int, fields: dict) -> bytes:
    w = Writer()
    w.int16(rtype)
    compile_encoder(RECORD_TYPES[rtype].key, 0, False)(w, fields)
    return w.getvalue()


def value_bytes(rtype: int, version: int, fields: dict) -> bytes:
    schema = RECORD_TYPES[rtype]
    w = Writer()
    w.int16(version)
    compile_encoder(schema.value, version, schema.value_flexible(version))(w, fields)
    return w.getvalue()


def group_records(i: int) -> list[tuple[bytes, bytes]]:
    from groupctl.protocol.consumer import (
        Assignment, Subscription, TopicPartitions, encode_assignment, encode_subscription)

    g = f"group-{i % 100}"
    members = [{"member_id": f"m{j}-{i}", "group_instance_id": None, "client_id": f"c{j}",
                "client_host": "/10.0.0.1", "rebalance_timeout": 300000, "session_timeout": 45000,
                "subscription": encode_subscription(Subscription(topics=["orders"])),
                "assignment": encode_assignment(Assignment(assigned_partitions=[
                    TopicPartitions("orders", [j * 3, j * 3 + 1, j * 3 + 2])]))}
               for j in range(2)]
    tps = [{"topic_id": TOPIC_ID, "partitions": [0, 1, 2]}]
    return [
        (key_bytes(2, {"group": g}), value_bytes(2, 3, {
            "protocol_type": "consumer", "generation": i, "protocol": "range",
            "leader": members[0]["member_id"], "current_state_timestamp": 1_700_000_000_000,
            "members": members})),
        (key_bytes(3, {"group_id": g}), value_bytes(3, 0, {"epoch": i, "metadata_hash": 42})),
        (key_bytes(5, {"group_id": g, "member_id": "abc"}), value_bytes(5, 0, {
            "client_id": "c1", "client_host": "/10.0.0.1", "subscribed_topic_names": ["orders"],
            "rebalance_timeout_ms": 300000, "classic_member_metadata": None})),
        (key_bytes(7, {"group_id": g, "member_id": "abc"}),
         value_bytes(7, 0, {"topic_partitions": tps})),
        (key_bytes(8, {"group_id": g, "member_id": "abc"}), value_bytes(8, 0, {
            "member_epoch": i, "previous_member_epoch": i - 1, "state": 0,
            "assigned_partitions": tps, "partitions_pending_revocation": []})),
    ]


def generate(root: str, records: int, batch: int, codec: int) -> list[str]:
    part_dir = os.path.join(root, "__consumer_offsets-0")
    os.makedirs(part_dir)
    commits = [(key_bytes(1, {"group": f"group-{g}", "topic": "orders", "partition": p}),
                value_bytes(1, 4, {"offset": 12345 + p, "leader_epoch": 3, "metadata": "",
                                   "commit_timestamp": 1_700_000_000_000, "topic_id": TOPIC_ID}))
               for g in range(100) for p in range(12)]
    files, offset, out = [], 0, None
    while offset < records:
        if offset % SEGMENT_RECORDS == 0:
            if out:
                out.close()
            files.append(os.path.join(part_dir, f"{offset:020d}.log"))
            out = open(files[-1], "wb")
        n = min(batch, records - offset)
        recs = []
        for i in range(offset, offset + n):
            if i % 100 < 95:
                k, v = commits[i % len(commits)]
            else:
                k, v = group_records(i // 100)[i % 100 - 95]
            recs.append((i % 7, k, v))
        out.write(encode_batch(recs, base_offset=offset, base_timestamp=1_700_000_000_000 + offset,
                               codec=codec))
        offset += n
    out.close()
    return files


def timed(cmd: list[str], out_path: str) -> float:
    start = time.perf_counter()
    with open(out_path, "w") as out:
        subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--codec", choices=list(CODECS.values()), default="none")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    codec = {v: k for k, v in CODECS.items()}[args.codec]
    with tempfile.TemporaryDirectory(prefix="groupctl-bench-records-") as root:
        files = generate(root, args.records, args.batch, codec)
        size = sum(os.path.getsize(f) for f in files)
        print(f"{args.records:,} records in {len(files)} segment(s), {size / 1e6:.1f} MB, "
              f"batches of {args.batch}, codec {args.codec}")
        kafka_cmd = [dist.java_cmd(), "-cp", f"{dist.kafka_libs()}/*",
                     "org.apache.kafka.tools.DumpLogSegments", "--offsets-decoder",
                     "--print-data-log", "--files", ",".join(files)]
        ours_cmd = [sys.executable, "-m", "groupctl", "-o", "ndjson", "decode", "records", *files]
        k_out, o_out = os.path.join(root, "kafka.out"), os.path.join(root, "groupctl.out")
        kafka = min(timed(kafka_cmd, k_out) for _ in range(args.repeat))
        ours = min(timed(ours_cmd, o_out) for _ in range(args.repeat))
        with open(k_out) as f:
            k_count = sum(1 for line in f if line.startswith("| offset:"))
        with open(o_out) as f:
            o_count = sum(1 for _ in f)
        if k_count != o_count:
            raise SystemExit(f"record counts differ: kafka {k_count}, groupctl {o_count}")
        print(f"{'kafka':10} {kafka:8.2f} s  ({k_count / kafka:,.0f} records/s)")
        print(f"{'groupctl':10} {ours:8.2f} s  ({o_count / ours:,.0f} records/s)  "
              f"ratio {ours / kafka:.2f} (target <= 1.0)")


if __name__ == "__main__":
    main()
