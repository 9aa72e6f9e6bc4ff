"""Generate the man page and shell completions from the typer app.

    python -m groupctl.cli.docs          # rewrite man/groupctl.1 and completions/*
    python -m groupctl.cli.docs --check  # exit 1 if any committed file is stale

Completion scripts hand each TAB back to groupctl (click's dynamic completion), so new
commands and options complete without regenerating; group names complete by asking the
cluster with a short timeout (see groupctl.cli.complete).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMPLETION_FILES = {"bash": "groupctl.bash", "zsh": "_groupctl", "fish": "groupctl.fish"}


def _root_command():
    import typer

    from .app import _register_commands, app

    _register_commands()
    return typer.main.get_command(app)


def _roff(text: str) -> str:
    text = (text or "").replace("\\", "\\\\").replace("-", "\\-")
    return "\n".join(("\\&" + ln) if ln.startswith((".", "'")) else ln for ln in text.splitlines())


def _options_roff(command, ctx) -> list[str]:
    lines = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        lines += [".TP", f"\\fB{_roff(names)}\\fR", _roff(help_text)]
    return lines


def _walk(command, ctx, path: list[str]):
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
        yield from _walk(sub, sub_ctx, path + [name])


def man_page() -> str:
    import typer._click as click

    from .. import __version__

    root = _root_command()
    ctx = click.Context(root, info_name="groupctl")
    out = [
        f'.TH GROUPCTL 1 "" "groupctl {__version__}" "User Commands"',
        ".SH NAME", "groupctl \\- see and steer Kafka consumer\\-group rebalances",
        ".SH SYNOPSIS", "\\fBgroupctl\\fR [\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
        ".SH DESCRIPTION", _roff(root.help or ""),
        "Global options may be given before or after the command.",
        ".SH GLOBAL OPTIONS", *_options_roff(root, ctx),
        ".SH COMMANDS",
    ]
    for path, cmd, cmd_ctx in _walk(root, ctx, []):
        usage = " ".join(cmd.collect_usage_pieces(cmd_ctx))
        out += [".SS " + _roff("groupctl " + " ".join(path) + " " + usage).rstrip(),
                _roff(cmd.help or cmd.short_help or "")]
        opts = _options_roff(cmd, cmd_ctx)
        if opts:
            out += [".PP", "Options:", ".RS", *opts, ".RE"]
    out += [
        ".SH EXIT STATUS",
        ".TP", "0", "success (for watch and join \\-\\-watch also a clean stop)",
        ".TP", "1", "unexpected internal error",
        ".TP", "2", "usage error",
        ".TP", "3", "no broker reachable",
        ".TP", "4", "authentication or authorization failed",
        ".TP", "5", "group not found (or Dead/Empty where a live group is required)",
        ".TP", "6", "timeout: the condition was not reached in time",
        ".TP", "7", "the broker refused the action with a Kafka error",
        ".TP", "130", "interrupted",
        ".SH ENVIRONMENT",
        ".TP", "GROUPCTL_BOOTSTRAP_SERVERS", "default for \\-\\-bootstrap\\-server",
        ".TP", "GROUPCTL_CONFIG", "path of the contexts file (default ~/.config/groupctl/config.yaml)",
        ".TP", "NO_COLOR", "no colour output",
    ]
    return "\n".join(out) + "\n"


def completion_script(shell: str) -> str:
    from typer._completion_classes import completion_init
    from typer._completion_shared import get_completion_script

    completion_init()
    return get_completion_script(prog_name="groupctl", complete_var="_GROUPCTL_COMPLETE", shell=shell)


def generated_files() -> dict[Path, str]:
    files = {ROOT / "man" / "groupctl.1": man_page()}
    for shell, name in COMPLETION_FILES.items():
        files[ROOT / "completions" / name] = completion_script(shell).rstrip("\n") + "\n"
    return files


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for path, text in generated_files().items():
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        stale.append(path)
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for path in stale:
        print(("stale: " if check else "wrote: ") + str(path.relative_to(ROOT)))
    if check and stale:
        print("the CLI changed: regenerate with `python -m groupctl.cli.docs` and commit the "
              "result", file=sys.stderr)
    return 1 if (check and stale) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
