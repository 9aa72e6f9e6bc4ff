"""The README is the front page: short, and every way on from it leads somewhere. It names
the set-up commands CI runs (`.ci/run` runs `./dev test`), links each command's page of the
docs site, and every relative link it holds points at a file (and heading) that exists."""
from __future__ import annotations

import re

import pytest

from groupctl.cli import docs

README = docs.ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """The anchor mkdocs' toc (and GitHub) make of a heading, for the headings used here."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", text))


def test_the_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "./dev demo" in text and "./dev test" in text
    assert "./dev test" in (docs.ROOT / ".ci" / "run").read_text()
    for name in ("DESIGN", "../shared"):
        assert name not in text


def test_the_readme_links_every_commands_page():
    import typer._click as click

    text = README.read_text(encoding="utf-8")
    root = docs._root_command()
    ctx = click.Context(root, info_name="groupctl")
    commands = {path[0] for path, _, _ in docs._walk(root, ctx, []) if len(path) == 1}
    assert {"describe", "watch", "history", "wait", "canary"} <= commands
    linked = set(re.findall(r"\]\(docs/commands/([\w-]+)\.md\)", text))
    assert commands - linked == set()


@pytest.mark.parametrize("target", sorted(set(LINK.findall(README.read_text(encoding="utf-8")))))
def test_every_relative_link_of_the_readme_resolves(target):
    if re.match(r"[a-z]+:", target):
        return
    path, _, anchor = target.partition("#")
    assert (docs.ROOT / path).exists(), target
    if anchor:
        headings = re.findall(r"^#+ (.+)$", (docs.ROOT / path).read_text(encoding="utf-8"), re.M)
        assert anchor in {_slug(h) for h in headings}, target
