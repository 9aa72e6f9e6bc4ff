"""The cyclic GC during the console script's start-up (see groupctl.__main__).

Start-up imports build ~100k long-lived objects and free almost nothing, yet they make the
cyclic GC run full collections over them again and again, and once more at exit: about
a fifth of a `groupctl describe`. So the console script holds collections off while a
command imports what it needs, then release() freezes everything built so far (moved to
the permanent generation: never scanned again, and it lives as long as the process
anyway) and turns the GC back on for the rest of the command. Code that calls neither
(tests, other programs importing groupctl) keeps its GC as it was.

A one-shot command that builds a large result and prints it (`describe --all`, `list`) also
calls no_full_collections(): Python's full collection runs each time the objects that
outlived the young generations grow by a quarter, so a result that only grows until it is
printed is walked again and again (ten full passes at 20,000 groups, a fifth of the CPU)
and nothing is ever freed; the young collections, which do free asyncio's short-lived
cycles, go on as before.
"""
import gc

_held = False
_console = False  # the console script started this process (hold() was called)
_NEVER = 1 << 30  # a gen-2 threshold no one-shot command reaches


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


def no_full_collections() -> None:
    """From now on, young collections only (see the module doc); in the console script
    only: a test or another program keeps its own thresholds."""
    if _console:
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, _NEVER)
