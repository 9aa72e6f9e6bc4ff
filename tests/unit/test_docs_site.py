"""The docs site (docs/, mkdocs.yml) builds with `mkdocs build --strict`: a link to a page
or an anchor that does not exist, a page left out of the nav or a nav entry without its
page fails here. Built into a temp dir (the checkout gets no site/)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from groupctl.cli import docs
from groupctl.cli.docs_metrics import metric_docs

DOCS = Path(docs.ROOT) / "docs"


def test_the_site_builds_strict(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "-f", str(Path(docs.ROOT) / "mkdocs.yml"), "-d", str(tmp_path)],
                          capture_output=True, text=True, timeout=180,
                          env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "commands" / "watch" / "index.html").exists()
    assert (tmp_path / "reference" / "metrics" / "index.html").exists()


def test_every_metric_a_page_names_is_served():
    """A metric renamed in the code cannot linger in a hand-written page."""
    served = set()
    for m in metric_docs():
        served |= {m.name} | ({m.name + s for s in ("_bucket", "_count", "_sum")}
                              if m.kind == "histogram" else set())
    named = {}
    for page in DOCS.rglob("*.md"):
        for name in re.findall(r"\b((?:groupctl|kafka_consumergroup)_[a-z_]+[a-z])\b",
                               page.read_text(encoding="utf-8")):
            named.setdefault(name, page.relative_to(DOCS).as_posix())
    assert {name: page for name, page in named.items() if name not in served} == {}
