"""The cyclic GC during the console script's start-up (see groupctl.__main__).

Start-up imports build ~100k long-lived objects and free almost nothing, yet they make the
cyclic GC run full collections over them again and again, and once more at exit: about
a fifth of a `groupctl describe`. So the console script holds collections off while a
command imports what it needs, then release() freezes everything built so far (moved to
the permanent generation: never scanned again, and it lives as long as the process
anyway) and turns the GC back on for the rest of the command. Code that calls neither
(tests, other programs importing groupctl) keeps its GC as it was.

A one-shot command that builds a large result, prints it and exits (`describe`, `list`)
calls one_shot() instead: no cyclic collections for the rest of the process. Its result
only grows until it is printed, and the collector walked it again and again without
freeing anything: full collections each time the surviving objects grew by a quarter (ten
passes at 20,000 groups, a fifth of the CPU) and every new object in two young ones (5 %
more). What the command drops is freed by reference counting as always; the few cycles
it makes (an exception and its traceback on a retried connection) wait for the exit,
bounded by the command's --timeout: at 20,000 groups the peak RSS is the same either way.

Such a command's process also ends without the interpreter's teardown (ends_at_once():
cli/app.py's run() flushes stdout and stderr, then os._exit): freeing every module and
object one by one took ~20 ms of a one-group `describe` (a fifth of it), and more the
larger the result. Nothing of theirs waits for the exit: their connections are closed and
their output flushed before it, and they register no atexit handler.

A long-running command calls settled() once it has built a large state that lives on (a
watch's fleet told and its scrape built ahead): frozen like start-up's, so that a full
collection no longer walks it (at 100,000 groups, 1.3 million objects: 1 s, in the middle
of a scrape or of the events). Cycles that become garbage among them later wait for the
exit: at most the state as it stood then. Once per process: a second freeze would also keep
whatever garbage cycles were young at its moment, for good.
"""
import gc

_held = False
_console = False  # the console script started this process (hold() was called)
_one_shot = False
_settled = False  # settled() froze the state once


def hold() -> None:
    """No cyclic collections until release(); a no-op when the GC is already off."""
    global _held, _console
    _console = True
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """End start-up: freeze what it built and collect normally from now on."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


def settled() -> None:
    """A long-running command's large state built (see the module doc): freeze it; in
    the console script only (a test or another program keeps its GC as it was)."""
    global _settled
    if _console and gc.isenabled() and not _settled:
        _settled = True   # once: each freeze would also keep the garbage cycles of its moment
        gc.freeze()


def one_shot() -> None:
    """No cyclic collections from now on (see the module doc): in the console script
    only, once start-up is released; a test or another program keeps its GC as it was."""
    global _held, _one_shot
    if _console:
        _held = False  # release() leaves it off
        _one_shot = True
        gc.disable()


def ends_at_once() -> bool:
    """Whether the console script ran a one-shot command (its process may skip the
    interpreter's teardown)."""
    return _one_shot
