"""The vocabulary of Kafka's JSON message specs (kafka-clients' and the group coordinator's),
as groupctl's specs spell it: one place for the conformance tests and the record-schema
generator (tools/gen_record_schemas.py)."""
from __future__ import annotations

import re


def snake(name: str) -> str:
    """GroupInstanceId -> group_instance_id (as the field names of our specs)."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def parse_versions(text: str | None) -> tuple[int, int | None] | None:
    """"3+" -> (3, None), "1-7" -> (1, 7), "4" -> (4, 4), "none"/absent -> None."""
    if text is None or text == "none":
        return None
    text = text.strip()
    if text.endswith("+"):
        return int(text[:-1]), None
    if "-" in text:
        lo, hi = text.split("-")
        return int(lo), int(hi)
    return int(text), int(text)
