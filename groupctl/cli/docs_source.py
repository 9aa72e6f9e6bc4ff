"""What the generated docs are made from, shared by the man page (cli.docs) and the docs
site's blocks (cli.docs_pages): the typer app's command tree, the exit codes and the
environment, as Markdown tables."""
from __future__ import annotations

from ..environment import ENVIRONMENT
from ..exitcodes import MEANINGS, ExitCode


def root_command():
    import typer

    from .app import _register_commands, app

    _register_commands()
    return typer.main.get_command(app)


def walk(command, ctx, path: list[str]):
    """Yield (path, command, ctx) for every command below `command`, sorted by name."""
    import typer._click as click  # vendored click in typer >= 0.20

    subcommands = getattr(command, "commands", None)
    if not subcommands:
        return
    for name in sorted(subcommands):
        sub = subcommands[name]
        if getattr(sub, "hidden", False):
            continue
        sub_ctx = click.Context(sub, info_name=name, parent=ctx)
        yield path + [name], sub, sub_ctx
        yield from walk(sub, sub_ctx, path + [name])


def exit_codes() -> list[tuple[int, str]]:
    missing = [code.name for code in ExitCode if code not in MEANINGS]
    if missing:
        raise SystemExit(f"groupctl.exitcodes.MEANINGS lacks {', '.join(missing)}")
    return [(int(code), MEANINGS[code]) for code in ExitCode]


def table_block(block: str) -> str:
    """The exit-code or environment table (Markdown)."""
    if block == "exit-codes":
        rows = [f"| {code} | {meaning} |" for code, meaning in exit_codes()]
        head = ["| code | meaning |", "|---|---|"]
    else:
        rows = [f"| `{name}` | {meaning} |" for name, meaning in ENVIRONMENT]
        head = ["| variable | meaning |", "|---|---|"]
    return "\n".join(head + rows)
