"""contrib/grafana/groupctl.json as a Grafana dashboard model (Grafana itself cannot be
installed here): its structure (unique ids and refIds, panels inside the 24-column grid
without overlapping, every variable a query uses defined), the sections the monitor needs
(fleet, one group, groupctl's own health, the canary), every metric it reads served by
groupctl's exporters (cli.docs_metrics: a renamed metric fails here), and every query
valid PromQL (`promtool check rules` parses them as recording rules). That each query
returns data from a real Prometheus scraping groupctl is
tests/integration/test_grafana_dashboard.py."""
from __future__ import annotations

import shutil
import subprocess

import yaml
from grafana_dashboard import model, panels, promql, used_variables, variables

from groupctl.cli.docs_metrics import metric_docs

PANEL_TYPES = {"stat", "timeseries", "table", "state-timeline", "bargauge", "gauge"}


def _exported() -> set[str]:
    names = set()
    for m in metric_docs():
        names.add(m.name)
        if m.kind == "histogram":
            names |= {m.name + "_bucket", m.name + "_count", m.name + "_sum"}
    return names


def test_the_model_is_a_dashboard():
    d = model()
    assert d["title"] and d["uid"] and isinstance(d["schemaVersion"], int)
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    cells: dict[tuple[int, int], int] = {}
    for p in d["panels"]:
        g = p["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24 and g["h"] > 0, p["title"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"{p['title']} overlaps panel {cells[(x, y)]}"
                cells[(x, y)] = p["id"]
    for p in panels(d):
        assert p["type"] in PANEL_TYPES and p["title"] and p["description"], p
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        refs = [t["refId"] for t in p["targets"]]
        assert refs and len(refs) == len(set(refs)) and all(t["expr"] for t in p["targets"])


def test_every_variable_a_query_uses_is_defined():
    defined = variables()
    assert defined["datasource"]["type"] == "datasource"
    assert {"cluster", "group"} <= set(defined)
    for p in panels():
        for t in p["targets"]:
            assert used_variables(t["expr"]) <= set(defined) | {"__rate_interval"}, t["expr"]


def test_the_sections_the_monitor_needs():
    rows = [p["title"] for p in model()["panels"] if p["type"] == "row"]
    assert rows == ["Fleet", "Group $group", "groupctl", "Canary"]
    titles = {p["title"] for p in panels()}
    assert {"Groups by state", "Rebalances by reason", "Groups rebalancing now", "State",
            "Rebalance duration", "Partition time without an owner",
            "Slowest member of the last rebalance", "Lag by topic", "Describing the cluster",
            "Canary round duration"} <= titles


def test_every_metric_it_reads_is_served_by_groupctl():
    import re

    exported = _exported()
    for p in panels():
        for t in p["targets"]:
            names = set(re.findall(r"\b((?:groupctl|kafka_consumergroup)_[a-z_]+)", t["expr"]))
            assert names and names <= exported, (p["title"], names - exported)


def test_every_query_is_valid_promql(tmp_path):
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: ./dev setup installs Debian's prometheus package"
    rules = [{"record": f"panel_{p['id']}_{t['refId']}", "expr": promql(t["expr"])}
             for p in panels() for t in p["targets"]]
    path = tmp_path / "queries.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    done = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules)} rules found" in done.stdout
