"""The tests' one way to run groupctl in-process: `run_cli(*argv)` -> (exit code, stdout,
stderr), through cli/app.invoke (where exceptions become exit codes), with streams of its
own. Import it as `from cli_runner import run_cli` (tests/ is on sys.path under pytest, as
for waiting.py).

    code, out, err = run_cli("-o", "json", "list", bootstrap=kafka.bootstrap, timeout=20)
    run_cli("force-rebalance", "g", stdin="y\\n", terminal=True)   # a person at a terminal
"""
from __future__ import annotations

import io
from collections.abc import Mapping


def run_cli(*argv: str, bootstrap: str | None = None, timeout: float | None = None,
            stdin: str | None = None, terminal: bool = False,
            environ: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    """`groupctl [-b bootstrap] [--timeout timeout] *argv`; `stdin`: what it reads (None:
    no stdin), `terminal`: stdin is a terminal; `environ`: its environment variables
    (default: this process's)."""
    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    env = Env(stdout=io.StringIO(), stderr=io.StringIO(),
              stdin=None if stdin is None else io.StringIO(stdin), stdin_is_terminal=terminal)
    if environ is not None:
        env.environ = environ
    args = [*(["-b", bootstrap] if bootstrap else []),
            *(["--timeout", str(timeout)] if timeout is not None else []), *argv]
    code = invoke(args, env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()
