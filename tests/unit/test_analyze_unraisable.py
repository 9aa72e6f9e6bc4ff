"""Ctrl-C during analyze: the KeyboardInterrupt of the signal may land in a finalizer (py4j
frees JVM objects from weakref callbacks), which Python reports as "Exception ignored in
..." with a traceback on stderr, before analyze's one line. Once interrupted, those
reports are muted; before, they are reported as ever."""
from __future__ import annotations

import sys

from groupctl.analytics.session import interrupt_kills_jvm


class _RaisesWhenFreed:
    def __del__(self):
        raise KeyboardInterrupt


def test_a_ctrl_c_in_a_finalizer_is_not_printed_once_interrupted():
    reported = []
    outer = sys.unraisablehook
    sys.unraisablehook = reported.append
    try:
        with interrupt_kills_jvm() as state:
            _RaisesWhenFreed()   # freed at once: not interrupted yet, reported
            assert [r.exc_type for r in reported] == [KeyboardInterrupt]
            state.interrupted = True   # what the SIGINT handler sets before raising
            _RaisesWhenFreed()
        _RaisesWhenFreed()   # the process is ending with 130: still muted
        assert len(reported) == 1
    finally:
        sys.unraisablehook = outer
