"""The deployment files of contrib/ are checked by what can check them here: the systemd
units by `systemd-analyze verify`, the Prometheus scrape config (and the rules it loads) by
`promtool check config`, the Kubernetes manifests by their own consistency (no cluster to
apply them to: selectors, ports and probes agree, and the monitor's arguments are options
`groupctl watch` has). systemd-analyze and promtool are Debian packages (./dev setup
installs prometheus; systemd is the host's): missing, these tests fail, never skip."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from groupctl.cli import docs
from groupctl.environment import ENVIRONMENT

CONTRIB = Path(docs.ROOT) / "contrib"
GROUPCTL = Path(sys.executable).with_name("groupctl")


def _tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is missing (apt-get install {'systemd' if 'systemd' in name else 'prometheus'})"
    return path


@pytest.mark.parametrize("unit", ["groupctl-monitor.service", "groupctl-canary.service"])
def test_systemd_units_verify(unit, tmp_path):
    """systemd-analyze checks that the command exists: the unit's /usr/local/bin/groupctl
    is pointed at this checkout's groupctl, nothing else changes."""
    text = (CONTRIB / "systemd" / unit).read_text()
    assert "ExecStart=/usr/local/bin/groupctl " in text
    (tmp_path / unit).write_text(text.replace("/usr/local/bin/groupctl", str(GROUPCTL)))
    done = subprocess.run([_tool("systemd-analyze"), "verify", str(tmp_path / unit)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr.strip(), done.stdout + done.stderr


def _options(*command: str) -> set[str]:
    import typer._click as click

    root = docs._root_command()
    ctx = click.Context(root, info_name="groupctl")
    cmd = root
    for name in command:
        cmd = cmd.commands[name]
    return {opt for p in cmd.get_params(click.Context(cmd, parent=ctx)) for opt in p.opts}


@pytest.mark.parametrize("unit, command", [("groupctl-monitor.service", "watch"),
                                           ("groupctl-canary.service", "canary")])
def test_systemd_units_give_options_their_command_has(unit, command):
    line = next(ln for ln in (CONTRIB / "systemd" / unit).read_text().splitlines()
                if ln.startswith("ExecStart="))
    words = line.split()
    given = {w for w in words[words.index(command) + 1:] if w.startswith("--")}
    assert given and given <= _options(command)


def test_prometheus_scrape_config_and_its_rules_check():
    done = subprocess.run([_tool("promtool"), "check", "config", "prometheus-scrape.yml"],
                          cwd=CONTRIB / "kubernetes", capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("SUCCESS") >= 3   # the config and its two rule files


def test_kubernetes_manifests_agree():
    manifests = yaml.safe_load_all((CONTRIB / "kubernetes" / "groupctl-monitor.yaml").read_text())
    by_kind = {d["kind"]: d for d in manifests}
    deployment, service = by_kind["Deployment"], by_kind["Service"]
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    container = pod["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    args = container["args"]
    assert args[0] == "watch" and {a for a in args if a.startswith("--")} <= _options("watch")
    assert ports["metrics"] == int(args[args.index("--metrics-port") + 1])
    assert all(p["targetPort"] in ports for p in service["spec"]["ports"])
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert container["envFrom"][0]["configMapRef"]["name"] == by_kind["ConfigMap"]["metadata"]["name"]
    assert set(by_kind["ConfigMap"]["data"]) <= {name for name, _ in ENVIRONMENT}
    monitor = yaml.safe_load((CONTRIB / "kubernetes" / "servicemonitor.yaml").read_text())
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert {e["port"] for e in monitor["spec"]["endpoints"]} <= {p["name"] for p in service["spec"]["ports"]}
