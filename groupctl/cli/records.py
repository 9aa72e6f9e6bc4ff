"""`decode records` (offline: __consumer_offsets segment files) and `history` (a group's
past from the coordinator's records, read from the cluster)."""
from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import UsageError
from .app import app
from .env import env_of
from .offline import decode_app


@decode_app.command("records")
def decode_records_cmd(
    ctx: typer.Context,
    files: List[str] = typer.Argument(
        ..., metavar="FILE...",
        help="__consumer_offsets segment files (*.log) as copied from a broker's data "
             "directory (…/__consumer_offsets-N/00000000000000000000.log)."),
    group: Optional[str] = typer.Option(
        None, "--group", "-g", metavar="G", help="Only the records of this group."),
):
    """Decode the group coordinator's records in __consumer_offsets segment files, as
    Kafka's DumpLogSegments --offsets-decoder does: every record type (0-23) and value
    version; one object per record with offset, timestamp, type, record name, key fields,
    value version and fields (a tombstone's value is null). A record type or value version
    this groupctl does not know is kept raw (hex) with its type and version; a damaged
    batch (bad CRC, truncated) is reported with its offset, and decoding goes on. Never
    touches the network."""
    import os

    from ..observe.records import coordinator_records, partition_of_path, segment_batches
    from ..protocol.records.batch import BatchError
    from ..render.records import RECORD_COLUMNS, Stream, iso_ms, record_row

    env = env_of(ctx)
    for path in files:
        if not os.path.isfile(path):
            raise UsageError(f"{path}: no such file" if not os.path.exists(path)
                             else f"{path}: not a file")
    stream = Stream(env, RECORD_COLUMNS, record_row)
    damaged = 0
    try:
        for path in files:
            partition = partition_of_path(path)
            for item in coordinator_records(segment_batches(path), group=group):
                if isinstance(item, BatchError):
                    damaged += 1
                    env.warn(f"{path}: {item}")
                    stream.write({"file": path, "partition": partition, "damaged_batch": {
                        "offset": item.offset, "position": item.position, "error": item.reason}})
                    continue
                rec = item.to_dict()
                stream.write({"file": path, "partition": partition, "offset": rec.pop("offset"),
                              "timestamp": iso_ms(item.timestamp), **rec})
    finally:
        stream.close()
    if damaged:
        env.warn(f"{damaged} damaged batch{'es' if damaged != 1 else ''} skipped")
