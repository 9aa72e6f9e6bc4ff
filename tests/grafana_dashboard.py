"""contrib/grafana/groupctl.json read as Grafana reads its dashboard model: its panels, their
queries and the template variables they use (shared by the unit test of its structure and
the broker test that runs every query against a real Prometheus).

    for panel in panels(): ... panel["targets"][i]["expr"]
    promql(expr, group=".+")   # the query as Grafana sends it, variables substituted
"""
from __future__ import annotations

import json
import re
from pathlib import Path

DASHBOARD = Path(__file__).resolve().parents[1] / "contrib" / "grafana" / "groupctl.json"
# Grafana's own variables the queries may use, and what the tests give them
BUILTINS = {"__rate_interval": "1m"}


def model() -> dict:
    return json.loads(DASHBOARD.read_text())


def panels(dashboard: dict | None = None) -> list[dict]:
    """The panels that query (rows hold none)."""
    return [p for p in (dashboard or model())["panels"] if p["type"] != "row"]


def variables(dashboard: dict | None = None) -> dict[str, dict]:
    return {v["name"]: v for v in (dashboard or model())["templating"]["list"]}


def used_variables(expr: str) -> set[str]:
    return set(re.findall(r"\$\{?(\w+)\}?", expr))


def promql(expr: str, **values: str) -> str:
    """`expr` with $name / ${name} replaced: the given values, Grafana's builtins, else
    the variable's allValue (the dashboard's "All")."""
    def value(m: re.Match) -> str:
        name = m.group(1)
        if name in values:
            return values[name]
        if name in BUILTINS:
            return BUILTINS[name]
        return variables()[name]["allValue"]
    return re.sub(r"\$\{?(\w+)\}?", value, expr)


