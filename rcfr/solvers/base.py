"""What every solver shares: iteration counting, `run` with progress and callbacks, checkpoints
that carry their game and load all or nothing."""

from __future__ import annotations

import json
import re
from typing import Callable

import numpy as np

from ..options import Options, check_checkpoint, check_int, describe, dumps, option_differences
from ..sources.rules import RulesGame
from ..tree import Game

#: Checkpoint fields owned by a regressor (weights, optimizer state) or a compiled model (a kept snapshot's, the
#: model a walk plays): their names and sizes change with its fit, so their owner checks them itself, and a
#: failure there rolls the whole load back.
REGRESSOR_FIELDS = re.compile(r"(^|\.)(regressor\d+|model\d+|snapshots\.\d+)\.")


#: checkpoint fields that say whose state it is (besides "game" and "fingerprint")
IDENTITY_FIELDS = ("solver", "options", "abstraction")


def _check_count(name: str, value, low: int) -> int:
    return check_int(name, value, low)


def check_game(game) -> Game:
    """`game` if it is a compiled `Game`, else a TypeError that says how to get one."""
    if not isinstance(game, Game):
        hint = f" (compile it: rcfr.load_game({game!r}))" if isinstance(game, str) else ""
        raise TypeError(f"game must be a compiled rcfr.Game, got {type(game).__name__} {game!r:.60}{hint}")
    return game


def by_rules(game) -> bool:
    """Whether `game` is walked by its rules (a `RulesGame`): the solvers' one question of the source, asked where
    a solver chooses its form (`MCCFRSolver._setup`, the sampled-RCFR factory, Bluff's public-tree choice) and
    where the kit builds a run (`experiments/build.py`);
    below them the buffers answer, and refusals read what a game offers (`require`)."""
    return isinstance(game, RulesGame)


def require(game, offer: str, who: str, needs: str = "") -> None:
    """Refuse `game` by name where its kind does not offer `offer` (``Game.offers``, ``RulesGame.offers``), the
    one spelling of what a source cannot do: a ValueError ``<who> on <game> walked by its rules: <needs>`` for
    the compiled arrays (anything that is not a game passes: `check_game` refuses it), a TypeError naming the
    type for the rules."""
    offers = getattr(game, "offers", None)
    if offer in (offers or ()):
        return
    if offer != "arrays":
        raise TypeError(f"{who} walks a game by its rules (a RulesGame), got {type(game).__name__}")
    if offers is not None:
        raise ValueError(f"{who} on {game.name} walked by its rules: {needs}")


def abstraction_identity(abstraction) -> str:
    """An information-set abstraction by name and a digest of its map ("none" without one)."""
    if abstraction is None:
        return "none"
    if not hasattr(abstraction, "infoset_map"):  # a CodeAbstraction of a game walked by its rules
        return f"{abstraction.name} {abstraction.identity}"
    return f"{abstraction.name} {describe(np.asarray(abstraction.infoset_map))}"


class IterativeSolver:
    """Subclasses implement `_advance(n)`: run n iterations and add n to `self.iteration`."""

    game: Game
    iteration: int = 0
    #: the solver's name in `rcfr.solvers.SOLVERS` (a class outside the registry: its class name)
    solver_name: str = ""
    #: the validated options object (`rcfr.options`); None for a solver that has none
    options: Options | None = None
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

    def state_bytes(self) -> int:
        """Bytes the solver keeps between iterations: every array it holds outside the game (each buffer
        once, at its allocated size) plus its regressors as compiled models (`rcfr.solvers.state_bytes`)."""
        from .state_bytes import state_bytes
        return state_bytes(self)

    # ---- checkpoints ---------------------------------------------------------------------------
    def abstraction_identity(self) -> str:
        """The information-set abstraction the solver runs on (subclasses with one say which)."""
        return "none"

    #: checkpoint fields whose length grows with the run (information sets met); the solver checks them
    sized_fields: tuple[str, ...] = ()

    def identity(self) -> dict[str, str]:
        """Whose state this solver's checkpoints are: its registry name, options and abstraction."""
        options = {} if self.options is None else self.options.description()
        return {"solver": self.solver_name or type(self).__name__, "options": dumps(options),
                "abstraction": self.abstraction_identity()}

    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything needed to resume, with the identity of the game, the solver and its options."""
        state = self._state()
        state["game"] = np.array(self.game.rules.description())
        state["fingerprint"] = np.array(self.game.fingerprint)
        state.update({k: np.array(v) for k, v in self.identity().items()})
        return state

    def load_state_dict(self, state) -> None:
        """Resume from `state`, all or nothing: the game's fingerprint, the solver's name, options and
        abstraction, and every field's name, shape and dtype are checked against this solver's own state
        before anything is assigned, and should a part still fail (a regressor's own state), the solver is
        put back as it was and the error raised."""
        state = {k: np.asarray(v) for k, v in dict(check_checkpoint(state)).items()}
        own = self.state_dict()
        check_identity(state, own, () if self.options is None else self.options.SAME_RESULTS)
        check_state(self.game, state, own, self.sized_fields)
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
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be None or a function of the solver, got {type(callback).__name__} "
                            f"{callback!r:.60}")
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


def check_identity(state: dict[str, np.ndarray], own: dict[str, np.ndarray], same_results=()) -> None:
    """Raise a ValueError, naming the difference, unless checkpoint `state` was written by the same solver
    (registry name), with the same options (but those in `same_results`, which never change results) and
    abstraction, as `own`, at an iteration >= 0."""
    missing = [k for k in IDENTITY_FIELDS if k not in state]
    if missing:
        raise ValueError(f"checkpoint has no {', '.join(map(repr, missing))} field(s): it was not written by "
                         f"state_dict() of this version of rcfr")
    saved, mine = str(state["solver"]), str(own["solver"])
    if saved != mine:
        raise ValueError(f"checkpoint is a {saved!r} solver's; this solver is {mine!r}")
    try:
        saved_options = json.loads(str(state["options"]))
    except ValueError:
        raise ValueError("checkpoint field 'options' is not the JSON that state_dict() writes") from None
    differences = option_differences(saved_options, json.loads(str(own["options"])), same_results)
    if differences:
        raise ValueError(f"checkpoint of {mine!r} was written with other options (saved -> this solver): "
                         f"{'; '.join(differences)}")
    if str(state["abstraction"]) != str(own["abstraction"]):
        raise ValueError(f"checkpoint was written on abstraction {str(state['abstraction'])!r}; this solver "
                         f"runs on {str(own['abstraction'])!r}")
    iteration = state.get("iteration")
    if iteration is not None and (iteration.shape != () or iteration.dtype.kind not in "iu" or int(iteration) < 0):
        raise ValueError(f"checkpoint field 'iteration' must be an integer >= 0, got {iteration!r}")


def check_state(game: Game, state: dict[str, np.ndarray], own: dict[str, np.ndarray], sized=()) -> None:
    """Raise a ValueError unless checkpoint `state` belongs to `game` and has the fields of `own` (a
    solver's state) with the same shapes (the same number of dimensions for the `sized` fields), dtypes of
    the same kind and finite numbers."""
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
        same = value.ndim == expected.ndim if key in sized else value.shape == expected.shape
        if not same or not np.can_cast(value.dtype, expected.dtype, "same_kind"):
            raise ValueError(f"checkpoint field {key!r} is {value.dtype}{list(value.shape)}, "
                             f"expected {expected.dtype}{list(expected.shape)}")
        if value.dtype.kind in "fc" and not np.isfinite(value).all():
            raise ValueError(f"checkpoint field {key!r} holds non-finite numbers")
