"""The depth-first walks' explicit stack: rows of (history, depth, index among its siblings).

A history is pushed as itself for its first visit and as ``-h - 1`` for its second (its children done). One
place for the row layout, so the walks cannot disagree on it; all ``inline="always"``.
"""

from __future__ import annotations

from numba import njit

from .states import ROOT


@njit(cache=True, inline="always")
def push_root(stack):
    """The root alone on the stack (slot depth 0, index 0); returns the top."""
    stack[0, 0], stack[0, 1], stack[0, 2] = ROOT, 0, 0
    return 0


@njit(cache=True, inline="always")
def push(stack, top, code, d, i):
    """Push history `code` at slot (depth d, index i); returns the new top."""
    top += 1
    stack[top, 0], stack[top, 1], stack[top, 2] = code, d, i
    return top


@njit(cache=True, inline="always")
def pop(stack, top):
    """(code, depth d, index, d + 1: its children's depth, new top) of the top row."""
    d = stack[top, 1]
    return stack[top, 0], d, stack[top, 2], d + 1, top - 1
