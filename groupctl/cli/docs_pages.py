"""The generated parts of the docs site (docs/), rewritten by `python -m groupctl.cli.docs`.

A hand-written page holds each generated block between `<!-- generated: NAME ... -->`
markers; the reference pages hold their tables the same way:

- `options: COMMAND` in docs/commands/COMMAND.md: the command's usage, its `--help` text
  and options, and those of its subcommands (from the typer app, as the man page);
- `events` in docs/reference/events.md (groupctl.events: envelope, sources, each type's
  fields and the extra fields its producers add);
- `json-fields` in docs/reference/json-fields.md (the fields `describe -o json` prints,
  from groupctl's own model);
- `metrics` in docs/reference/metrics.md (cli.docs_metrics: the exporters' families);
- `exit-codes`, `environment` in docs/reference/exit-codes.md and environment.md.

Every top-level command must have its page (docs/commands/NAME.md with its markers):
a new command stops the generator until it has one.
"""
from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

DOCS = "docs"


def markers(block: str) -> tuple[str, str]:
    return (f"<!-- generated: {block} (python -m groupctl.cli.docs) -->",
            f"<!-- end generated: {block} -->")


def rewrite(text: str, block: str, body: str, where: str) -> str:
    begin, end = markers(block)
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise SystemExit(f"{where} lacks the markers of the generated {block} block: "
                         f"{begin} ... {end}")
    return text[:start + len(begin)] + "\n" + body + "\n" + text[stop:]


def md_text(text: str) -> str:
    """Plain help text as Markdown: `code` spans kept, the rest escaped."""
    parts = re.split(r"(`[^`\n]+`)", text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(part)
        else:
            part = re.sub(r"([\\*_\[\]|])", r"\\\1", part)
            out.append(part.replace("<", "&lt;").replace(">", "&gt;"))
    return "".join(out)


# ---- commands ---------------------------------------------------------------------------
def _options_md(command, ctx) -> list[str]:
    lines = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        lines.append(f"- `{names}`: {md_text(' '.join(help_text.split()))}")
    return lines


def _command_md(path: list[str], command, ctx) -> list[str]:
    usage = " ".join(command.collect_usage_pieces(ctx))
    title = "groupctl " + " ".join(path)
    out = [f"### `{title}`", "", "```text", f"{title} {usage}".rstrip(), "```", ""]
    help_text = (command.help or command.short_help or "").strip()
    if help_text:
        out += ["```text", *[ln.rstrip() for ln in help_text.splitlines()], "```", ""]
    options = _options_md(command, ctx)
    if options:
        out += ["Options:", "", *options, ""]
    return out


def command_blocks() -> dict[str, str]:
    """{top-level command: its generated block} (subcommands inside their parent's)."""
    import typer._click as click

    from .docs_source import root_command as _root_command
    from .docs_source import walk as _walk

    root = _root_command()
    ctx = click.Context(root, info_name="groupctl")
    blocks: dict[str, list[str]] = {}
    for path, command, cmd_ctx in _walk(root, ctx, []):
        blocks.setdefault(path[0], []).extend(_command_md(path, command, cmd_ctx))
    return {name: "\n".join(lines).rstrip("\n") for name, lines in blocks.items()}


def global_options_block() -> str:
    import typer._click as click

    from .docs_source import root_command as _root_command

    root = _root_command()
    return "\n".join(_options_md(root, click.Context(root, info_name="groupctl")))


# ---- events ------------------------------------------------------------------------------
def _event_classes() -> list:
    """Every event dataclass with a type (events.Event subclasses)."""
    from .. import events

    return [c for c in vars(events).values()
            if isinstance(c, type) and issubclass(c, events.Event) and c.KIND]


def events_block() -> str:
    from ..events import ENVELOPE, EVENT_FIELDS, SCHEMA_VERSION, SOURCES

    extras: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    for cls in _event_classes():
        kind = str(cls.KIND)
        for f in fields(cls):
            if f.name not in EVENT_FIELDS[kind] and f.name not in extras.setdefault(kind, []):
                extras[kind].append(f.name)
        doc = " ".join((cls.__doc__ or "").split())
        if doc and not doc.startswith(cls.__name__ + "("):   # dataclass's own signature
            notes.setdefault(kind, []).append(doc)
    out = [f"Envelope of every event (schema version `{SCHEMA_VERSION}`): "
           + ", ".join(f"`{n}`" for n in ENVELOPE) + ".", "",
           "Sources (`source`): " + ", ".join(f"`{s}`" for s in SOURCES) + ".", "",
           "| event | fields (always present, `null` when unknown) | extra fields "
           "(present when its producer knows them) |", "|---|---|---|"]
    for kind, names in EVENT_FIELDS.items():
        extra = ", ".join(f"`{n}`" for n in extras.get(kind, [])) or "-"
        out.append(f"| `{kind}` | {', '.join(f'`{n}`' for n in names)} | {extra} |")
    out.append("")
    for kind in EVENT_FIELDS:
        for note in notes.get(kind, []):
            out.append(f"- `{kind}`: {md_text(note)}")
    return "\n".join(out)


# ---- describe -o json --------------------------------------------------------------------
def example_group() -> dict:
    """`describe -o json`'s object for an example consumer group, from groupctl's model."""
    from ..observe.reads.model import GroupDescription, Member, OffsetRow, TopicPartitions

    member = Member("m-1", client_id="c", host="/h", member_epoch=3,
                    assignment=[TopicPartitions("t", [0, 1])],
                    target_assignment=[TopicPartitions("t", [0, 1])], member_protocol="consumer")
    group = GroupDescription("g", type="consumer", state="Reconciling", protocol="uniform",
                             group_epoch=4, assignment_epoch=4,
                             coordinator={"id": 1, "host": "h", "port": 1},
                             coordinator_partition=7, members=[member],
                             offsets=[OffsetRow("t", 0, 5, 9, "m-1")])
    return group.to_dict()


def _json_type(value) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string",
            list: "array", dict: "object"}.get(type(value), type(value).__name__)


def json_fields_block() -> str:
    data = example_group()
    out = ["| field | type in the example | example |", "|---|---|---|"]

    def walk(obj: dict, prefix: str) -> None:
        for name, value in obj.items():
            shown = json.dumps(value) if not isinstance(value, (list, dict)) else ""
            out.append(f"| `{prefix}{name}` | {_json_type(value)} | "
                       f"{'`' + shown + '`' if shown else ''} |")
            if isinstance(value, list) and value and isinstance(value[0], dict) and \
                    name in ("members", "offsets"):
                walk(value[0], f"{prefix}{name}[].")

    walk(data, "")
    return "\n".join(out)


# ---- exit codes, environment -------------------------------------------------------------
def exit_codes_block() -> str:
    from .docs_source import table_block

    return table_block("exit-codes")


def environment_block() -> str:
    from .docs_source import table_block

    return table_block("environment")


REFERENCE_BLOCKS = {
    "reference/events.md": ("events", events_block),
    "reference/json-fields.md": ("json-fields", json_fields_block),
    "reference/exit-codes.md": ("exit-codes", exit_codes_block),
    "reference/environment.md": ("environment", environment_block),
}


def generated_pages(root: Path) -> dict[Path, str]:
    """{page: its text with every generated block rewritten}."""
    from .docs_metrics import metrics_page

    docs = root / DOCS
    out: dict[Path, str] = {}

    def put(page: Path, block: str, body: str) -> None:
        text = out.get(page)
        if text is None:
            if not page.exists():
                raise SystemExit(f"{page.relative_to(root)} is missing: every command and "
                                 f"reference has its page ({block})")
            text = page.read_text(encoding="utf-8")
        out[page] = rewrite(text, block, body, str(page.relative_to(root)))

    for name, body in command_blocks().items():
        put(docs / "commands" / f"{name}.md", f"options: {name}", body)
    put(docs / "commands" / "index.md", "global-options", global_options_block())
    for relative, (block, make) in REFERENCE_BLOCKS.items():
        put(docs / relative, block, make())
    put(docs / "reference" / "metrics.md", "metrics", metrics_page())
    return out
