"""Every field `describe -o json` prints is named in the docs site's JSON fields page
(docs/reference/json-fields.md), in its tables above the generated list (the names are a
stable interface: an undocumented one cannot be relied on, or renamed safely). Built from
groupctl's own model, so a new field fails here until documented."""
from __future__ import annotations

import re

from groupctl.cli import docs, docs_pages


def _site_page_tables() -> str:
    """The JSON fields page without its generated list (which names every field anyway)."""
    text = (docs.ROOT / "docs" / "reference" / "json-fields.md").read_text(encoding="utf-8")
    return text.split("<!-- generated: json-fields", 1)[0]


def _documented(section: str) -> set[str]:
    return set(re.findall(r"`([a-z_]+)(?:\[\])?`", section))  # `members[]`


def test_every_describe_field_is_documented():
    data = docs_pages.example_group()   # the model's object, as the docs site lists it
    assert data["rebalancing"] is True and data["members"][0]["partitions"] == 2
    documented = _documented(_site_page_tables())
    assert set(data) - documented == set()
    assert set(data["members"][0]) - documented == set()
    assert set(data["offsets"][0]) - documented == set()
