"""The cyclic GC during the console script's start-up (see groupctl.__main__).

Start-up imports build ~100k long-lived objects and free almost nothing, yet they make the
cyclic GC run full collections over them again and again, and once more at exit: about
a fifth of a `groupctl describe`. So the console script holds collections off while a
command imports what it needs, then release() freezes everything built so far (moved to
the permanent generation: never scanned again, and it lives as long as the process
anyway) and turns the GC back on for the rest of the command. Code that calls neither
(tests, other programs importing groupctl) keeps its GC as it was.
"""
import gc

_held = False


def hold() -> None:
    """No cyclic collections until release(); a no-op when the GC is already off."""
    global _held
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
