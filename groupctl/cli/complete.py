"""Shell completion of group names: asks the cluster (ListGroups to every broker) with a
short timeout and completes nothing when that fails. The brokers and security settings
come from the global options already on the command line (-b, --context,
--command-config), else from the environment and the contexts file, as for any command.

Completion runs without the app's callback, so the settings are read from the root
context's parsed parameters here. The app is built with add_completion=False (no
--install-completion option), so typer's shell classes are registered here, on import,
when the shell asks for completions ($_GROUPCTL_COMPLETE set by the scripts in
completions/); otherwise click answers "Shell bash not supported".
"""
from __future__ import annotations

import os

COMPLETION_TIMEOUT = 1.5
COMPLETE_VAR = "_GROUPCTL_COMPLETE"


def enable_shell_completion() -> None:
    if os.environ.get(COMPLETE_VAR):
        from typer._click.shell_completion import add_completion_class, get_completion_class
        from typer._completion_classes import completion_init

        completion_init()
        for shell in ("bash", "zsh", "fish", "powershell", "pwsh"):
            cls = get_completion_class(shell)
            if cls is not None:
                add_completion_class(_hoisting(cls), shell)


def _hoisting(cls):
    """`cls` completing on the words completion_args() makes of the command line."""

    # a class made on top of whichever shell's class click has: mypy cannot see the base
    class Hoisting(cls):  # type: ignore[valid-type,misc]
        def get_completion_args(self):
            args, incomplete = super().get_completion_args()
            return completion_args(args), incomplete

    Hoisting.__name__ = Hoisting.__qualname__ = cls.__name__
    return Hoisting


def completion_args(args: list[str]) -> list[str]:
    """The words before the cursor as click must see them: global options may stand after
    the command (`groupctl describe g -o <TAB>`), but click knows them only in front, as
    cli.app.run moves them. The value of a global option is completed at the top level."""
    from .app import GLOBAL_OPTIONS, hoist_global_options

    if args and "=" not in args[-1] and GLOBAL_OPTIONS.get(args[-1]):
        return [args[-1]]
    return hoist_global_options(args)



enable_shell_completion()


def _env_from(ctx):
    from .env import Env, Settings

    params = ctx.find_root().params if ctx is not None else {}
    env = Env.from_system()
    env.stderr_is_terminal = False  # no "connecting ..." line in the middle of a TAB
    env.settings = Settings(params.get("bootstrap_server"), params.get("context"),
                            params.get("command_config"), "json", COMPLETION_TIMEOUT,
                            True, False)
    return env


def group_names(env, timeout: float = COMPLETION_TIMEOUT) -> list[str]:
    """Every group id on the cluster, or [] when the cluster does not answer in time."""
    import asyncio

    from ..observe.reads.listing import list_groups
    from .common import make_cluster

    async def main():
        async with make_cluster(env, timeout=timeout, connect_timeout=timeout) as cluster:
            return await list_groups(cluster)

    async def bounded():
        return await asyncio.wait_for(main(), timeout)

    try:
        return [g.group for g in asyncio.run(bounded()).groups]
    except BaseException:  # noqa: BLE001 - completion must never fail loudly
        return []


def complete_groups(ctx, incomplete: str) -> list[str]:
    """typer autocompletion: the groups whose id starts with what was typed so far, minus
    those already on the command line."""
    try:
        env = _env_from(ctx)
        given = set((ctx.params or {}).get("groups") or ()) if ctx is not None else set()
    except BaseException:  # noqa: BLE001
        return []
    return [g for g in group_names(env) if g.startswith(incomplete) and g not in given]


def complete_lab_names(incomplete: str) -> list[str]:
    """typer autocompletion of --name: the labs under the lab root (those with a state
    file), by prefix."""
    try:
        from ..lab.state import lab_root

        root = lab_root()
        return sorted(p.name for p in root.iterdir()
                      if p.name.startswith(incomplete) and (p / "state.json").is_file())
    except BaseException:  # noqa: BLE001 - completion must never fail loudly
        return []


def complete_sources(incomplete: str) -> list[str]:
    """watch --source: auto, describe or records."""
    return [s for s in ("auto", "describe", "records") if s.startswith(incomplete)]
