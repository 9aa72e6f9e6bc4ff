"""The analytics pipeline passes `snapshot` lines by (issue 23: a watch's first look, told in
full): records with them give the same results as without, none counted as damaged."""
from __future__ import annotations

import json

from test_analyze_type_changed import _conversion_records


def test_snapshot_lines_change_no_result(spark, tmp_path):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    records = _conversion_records()
    assert [r["event"] for r in records].count("snapshot") == 1

    def run(recs, name):
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
        tables = analyze(spark, Inputs(events=[str(path)]))
        try:
            out = {n: load.rows(df) for n, df in tables.named().items() if n != "files"}
            out["files"] = [{k: v for k, v in row.items() if k != "file"}
                            for row in load.rows(tables.files)]
            return out
        finally:
            tables.release()

    with_snapshot = run(records, "with.ndjson")
    without = run([r for r in records if r["event"] != "snapshot"], "without.ndjson")
    assert with_snapshot.pop("files") == [{"events": len(records), "unparsed": 0}]
    assert without.pop("files") == [{"events": len(records) - 1, "unparsed": 0}]
    assert with_snapshot == without
