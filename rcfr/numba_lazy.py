"""numba functions compiled for their signatures at their first call instead of at import.

``njit([signatures])`` compiles (or loads from the disk cache) every signature when the module is imported,
and the rules path's walks take their game's functions as first-class function types, so they need
explicit signatures. Compiled at import, `rcfr.load_game("kuhn")` paid about 35 s of cold compiles of
rules-path walks (Bluff's evaluation, the full-regret walk, ...) that a user of a compiled game never
calls, and every test worker paid it again. `njit_on_first_call` keeps the signatures and moves the
compile to the first call. For entry points called from Python only: a jitted caller cannot call it.
"""

from __future__ import annotations

import functools
import threading


class LazyDispatcher:
    """Stands for ``njit(signatures, **options)(py_func)`` and builds it at first use (thread-safe: the
    Phantom evaluation calls its kernel from threads). Attributes (``overloads``, ``py_func``, ...) are the
    built dispatcher's."""

    def __init__(self, py_func, signatures, options):
        self.py_func, self._signatures, self._options = py_func, signatures, options
        self._dispatcher = None
        self._lock = threading.Lock()
        functools.update_wrapper(self, py_func)

    @property
    def dispatcher(self):
        if self._dispatcher is None:
            with self._lock:
                if self._dispatcher is None:
                    from numba import njit

                    self._dispatcher = njit(self._signatures, **self._options)(self.py_func)
        return self._dispatcher

    def __call__(self, *args):
        return self.dispatcher(*args)

    def __getattr__(self, name):
        return getattr(self.dispatcher, name)


def njit_on_first_call(signatures, **options):
    """Decorator: like ``numba.njit(signatures, **options)``, compiled at the first call."""
    return lambda py_func: LazyDispatcher(py_func, signatures, options)
