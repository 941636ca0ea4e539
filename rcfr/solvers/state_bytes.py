"""What a solver keeps between iterations, in bytes: one general count for every solver.

``state_bytes(solver)`` = the bytes of every distinct array buffer the solver holds, found by following its
attributes (objects' ``__dict__``, tuples, lists, dicts, namedtuple bundles), each buffer once however many
views share it (an array's ``.base`` chain down to its owner), plus each regressor as its compiled model
(`rcfr.regressors.compile_model`: the arrays a prediction needs) or, when it cannot be compiled, its
pickled size, and each kept snapshot (`rcfr.solvers.snapshots.Snapshot`, average="mixture") as its compiled
model's arrays. Not counted: the game (its arrays, memory-mapped or not, are the game's and are shared by
every solver of it: anything reachable from ``solver.game``), and fit-time work a regressor may cache
(sort orders, casts). An array that was allocated at capacity counts whole (the rules path's arrays
double when half used): bytes held, not bytes used. So a table solver on a compiled game holds a fixed
number of bytes per sequence from the start, and a solver on the rules path grows with the sets met.
"""

from __future__ import annotations

import pickle
import types

import numpy as np

_LEAVES = (str, bytes, int, float, bool, complex, type(None), type, types.ModuleType)


def _owner(array: np.ndarray) -> np.ndarray:
    """The array that owns the memory of `array` (the end of its ``.base`` chain of arrays)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _is_regressor(value) -> bool:
    return hasattr(value, "fit") and hasattr(value, "predict") and not isinstance(value, type)


def _is_compiled_model(value) -> bool:
    from ..regressors.compiled import CompiledModel
    return isinstance(value, CompiledModel)


def _is_snapshot(value) -> bool:
    from .snapshots import Snapshot
    return isinstance(value, Snapshot)


def regressor_bytes(model) -> int:
    """A fitted regressor's bytes: its compiled model's arrays, else its pickle; 0 before its first fit."""
    from sklearn.exceptions import NotFittedError

    from ..regressors.compiled import NotCompilable, compile_model
    try:
        return compile_model(model).nbytes
    except NotFittedError:
        return 0
    except NotCompilable:
        return len(pickle.dumps(model))


def state_bytes(solver) -> int:
    """See the module docstring."""
    return sum(state_breakdown(solver).values())


def state_breakdown(solver) -> dict[str, int]:
    """`state_bytes` by where it is held: the attribute path of each non-empty array buffer (the first path
    met, as ``buffers.state.regrets``) and of each regressor (``regressors[0]``), with its bytes."""
    game = getattr(solver, "game", None)
    seen: set = set()
    _walk(game, "game", seen, {}, None)  # the game's buffers are not the solver's
    found: dict[str, int] = {}
    _walk(solver, "", seen, found, game)
    return found


def _walk(value, path: str, seen: set, found: dict[str, int], game) -> None:
    """Add to `found` (path -> bytes) the array owners and regressors reachable from `value` and not in
    `seen` (iteratively: deep bundles would overflow Python's stack)."""
    stack = [(value, path)]
    while stack:
        value, path = stack.pop()
        if value is None or isinstance(value, _LEAVES) or (game is not None and value is game):
            continue
        if isinstance(value, np.ndarray):
            owner = _owner(value)
            if id(owner) not in seen:
                seen.add(id(owner))
                if owner.nbytes and not isinstance(owner, np.memmap):
                    found[path] = owner.nbytes
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if hasattr(value, "untyped_storage"):  # a torch tensor (the neural solvers' networks): its storage once
            storage = value.untyped_storage()
            if ("torch", storage.data_ptr()) not in seen:
                seen.add(("torch", storage.data_ptr()))
                found[path] = storage.nbytes()
            continue
        if _is_compiled_model(value):  # a regressor's compiled form (`State.model`'s): counted as its regressor
            continue
        if _is_snapshot(value):  # a model kept after its regressor moved on: its own arrays
            found[path] = value.model.nbytes
            continue
        if _is_regressor(value):
            found[path] = regressor_bytes(value)
        elif isinstance(value, dict):
            stack.extend((v, f"{path}[{k!r}]") for k, v in value.items())
        elif isinstance(value, tuple) and hasattr(value, "_fields"):  # the bundles: named fields
            stack.extend((v, f"{path}.{k}") for k, v in zip(value._fields, value))
        elif isinstance(value, (list, tuple)):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value))
        elif isinstance(value, (set, frozenset)):
            stack.extend((v, f"{path}{{}}") for v in value)
        elif hasattr(value, "__dict__") and not callable(value):
            stack.extend((v, f"{path}.{k}" if path else k) for k, v in vars(value).items())
