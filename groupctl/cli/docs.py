"""Generate the man page, shell completions and the docs site's references from the code.

    python -m groupctl.cli.docs          # rewrite man/groupctl.1, completions/* and the
                                         # generated blocks of docs/ (groupctl.cli.docs_pages)
    python -m groupctl.cli.docs --check  # exit 1 if any committed file is stale

The man page's EXIT STATUS and ENVIRONMENT and the docs site's exit-code and environment
tables (between `<!-- generated: ... -->` markers) come from the same source:
groupctl.exitcodes.MEANINGS and groupctl.environment.ENVIRONMENT. The README is a front page
written by hand: it links each command's page (tests/unit/test_readme.py checks that).

Completion scripts hand each TAB back to groupctl (click's dynamic completion), so new
commands and options complete without regenerating; group names complete by asking the
cluster with a short timeout (see groupctl.cli.complete).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..environment import ENVIRONMENT
from .docs_source import exit_codes as _exit_codes
from .docs_source import root_command as _root_command
from .docs_source import walk as _walk

ROOT = Path(__file__).resolve().parents[2]
COMPLETION_FILES = {"bash": "groupctl.bash", "zsh": "_groupctl", "fish": "groupctl.fish"}


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
    out += [".SH EXIT STATUS"]
    for code, meaning in _exit_codes():
        out += [".TP", str(code), _roff(_plain(meaning))]
    out += [".SH ENVIRONMENT"]
    for name, meaning in ENVIRONMENT:
        out += [".TP", _roff(name), _roff(_plain(meaning))]
    return "\n".join(out) + "\n"


def _plain(markdown: str) -> str:
    return markdown.replace("`", "")


def completion_script(shell: str) -> str:
    from typer._completion_classes import completion_init
    from typer._completion_shared import get_completion_script

    completion_init()
    return get_completion_script(prog_name="groupctl", complete_var="_GROUPCTL_COMPLETE", shell=shell)


def generated_files(*, site: bool = True) -> dict[Path, str]:
    files = {ROOT / "man" / "groupctl.1": man_page()}
    for shell, name in COMPLETION_FILES.items():
        files[ROOT / "completions" / name] = completion_script(shell).rstrip("\n") + "\n"
    if site:
        from .docs_pages import generated_pages

        files.update(generated_pages(ROOT))
    return files


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    site = (ROOT / "docs").is_dir()   # an installed copy (site-packages) has no docs/
    for path, text in generated_files(site=site).items():
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
