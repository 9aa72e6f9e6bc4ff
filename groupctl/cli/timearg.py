"""--since / --until as every command takes them (`history`, `analyze`): ISO-8601 (no zone
= UTC), epoch milliseconds, or a duration before now. One parser, one help text."""
from __future__ import annotations

import re

from ..errors import UsageError

TIME_HELP = ("ISO-8601 (2026-11-24T05:51:00Z; no zone = UTC), epoch milliseconds, or a "
             "duration before now (90s, 15m, 2h, 1d).")

# epoch milliseconds a record timestamp (int64) and ISO-8601 can both say: 1970 to 9999
MAX_MS = 253_402_300_799_999
_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_time(text: str, option: str, now_ms: int) -> int:
    """`text` as epoch milliseconds; UsageError (exit 2) for anything else, or a time
    before 1970 or after 9999."""
    from datetime import datetime, timezone

    value = text.strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)", value)
    if m:
        ms = now_ms - int(float(m.group(1)) * _UNITS[m.group(2)])
    elif value.isdigit():
        ms = int(value)
    else:
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise UsageError(f"{option}: not a time: {text!r} ({TIME_HELP})") from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        ms = int(dt.timestamp() * 1000)
    if not 0 <= ms <= MAX_MS:
        raise UsageError(f"{option}: {text!r} is {'before 1970' if ms < 0 else 'after 9999'}"
                         f" ({TIME_HELP})")
    return ms


def iso_ms(ms: int) -> str:
    """Epoch milliseconds as UTC ISO-8601 with milliseconds (2026-11-24T05:51:26.407Z)."""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
