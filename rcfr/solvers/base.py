"""What every solver shares: iteration counting, `run` with progress and callbacks, checkpoints
that carry their game and load all or nothing."""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from ..tree import Game

#: Checkpoint fields owned by a regressor (weights, optimizer state): their names and sizes change with
#: its fit, so the regressor checks them itself, and a failure there rolls the whole load back.
REGRESSOR_FIELDS = re.compile(r"(^|\.)regressor\d+\.")


def _check_count(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


class IterativeSolver:
    """Subclasses implement `_advance(n)`: run n iterations and add n to `self.iteration`."""

    game: Game
    iteration: int = 0
    #: iterations per `_advance` call when no callback needs control back sooner
    chunk: int = 16

    def _advance(self, iterations: int) -> None:
        raise NotImplementedError

    def _state(self) -> dict[str, np.ndarray]:
        """Copies of everything needed to resume (subclasses)."""
        raise NotImplementedError

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        """Assign a checked `state` (subclasses)."""
        raise NotImplementedError

    # ---- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything needed to resume, with the identity of the game it belongs to."""
        state = self._state()
        state["game"] = np.array(self.game.rules.description())
        state["fingerprint"] = np.array(self.game.fingerprint)
        return state

    def load_state_dict(self, state) -> None:
        """Resume from `state`, all or nothing: the game's fingerprint and every field's name, shape and
        dtype are checked against this solver's own state before anything is assigned, and should a
        part still fail (a regressor's own state), the solver is put back as it was and the error raised."""
        state = {k: np.asarray(v) for k, v in dict(state).items()}
        own = self.state_dict()
        check_state(self.game, state, own)
        try:
            self._load_state(state)
        except BaseException:
            self._load_state(own)
            raise

    def iterate(self) -> None:
        """One iteration."""
        self._advance(1)

    def run(self, iterations: int, *, progress: bool = False,
            callback: Callable[["IterativeSolver"], object] | None = None, every: int = 1):
        """Run `iterations` more iterations; call `callback(self)` whenever the iteration count is a
        multiple of `every`. Shows a progress bar when `progress` is true."""
        from tqdm.auto import tqdm
        left = _check_count("iterations", iterations, 0)
        every = _check_count("every", every, 1)
        with tqdm(total=left, disable=not progress, desc=type(self).__name__, unit="it") as bar:
            while left:
                step = min(left, self.chunk)
                if callback is not None:
                    step = min(step, every - self.iteration % every)
                self._advance(step)
                left -= step
                bar.update(step)
                if callback is not None and self.iteration % every == 0:
                    callback(self)
        return self


def check_state(game: Game, state: dict[str, np.ndarray], own: dict[str, np.ndarray]) -> None:
    """Raise a ValueError unless checkpoint `state` belongs to `game` and has the fields of `own` (a
    solver's state) with the same shapes, dtypes of the same kind and finite numbers."""
    if "fingerprint" not in state or "game" not in state:
        raise ValueError("checkpoint has no 'fingerprint' and 'game' fields: it was not written by "
                         "state_dict() of this version of rcfr")
    game.check_fingerprint("checkpoint", str(state["fingerprint"]), str(state["game"]))
    fixed = [k for k in own if not REGRESSOR_FIELDS.search(k)]
    missing = [k for k in fixed if k not in state]
    unknown = [k for k in state if k not in own and not REGRESSOR_FIELDS.search(k)]
    if missing or unknown:
        raise ValueError(f"checkpoint fields do not match this solver: missing {missing[:5]}, "
                         f"unknown {unknown[:5]} (a checkpoint of another solver or options?)")
    for key in fixed:
        value, expected = state[key], own[key]
        if value.shape != expected.shape or not np.can_cast(value.dtype, expected.dtype, "same_kind"):
            raise ValueError(f"checkpoint field {key!r} is {value.dtype}{list(value.shape)}, "
                             f"expected {expected.dtype}{list(expected.shape)}")
        if value.dtype.kind in "fc" and not np.isfinite(value).all():
            raise ValueError(f"checkpoint field {key!r} holds non-finite numbers")
