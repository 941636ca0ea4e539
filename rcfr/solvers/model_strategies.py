"""Strategies made where an information set is met: the encoder's rows, a compiled model, regret matching.

The lean path's visited profile predicts in batches, returning to Python for each (`rcfr.solvers.visited`).
Code that holds a set's game state (the rules path keeps one per set; `rcfr.features.encoders.infoset_states`
replays one on a compiled game) and the player's compiled model (`rcfr.regressors.compiled`) can make the
strategy on the spot instead: `model_strategy` writes the set's rows with the game's encoder, predicts
each with `predict_row` and regret-matches t x prediction with the lean path's own arithmetic
(`predictions.match_set`). So a set gets the strategy a batch would give it: bit for bit for trees, whose
compiled predictions are the regressor's own; to rounding (1e-12) for dense layers. It is the unit a
sampling walk calls at a set (issue 34, item 1); `model_strategies` applies it to many sets from Python.

`WalkModel` is what the walks call it with: set as `bundles.State.model`, it makes the walks (through the
`rcfr.sampling.strategies` functions overloaded here) take every set's strategy from the player's compiled model
at the walk's own state of the history, into a row per depth, instead of a profile (lean sampled RCFR's
``profile="model"``, `rcfr.solvers.lean_rules`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from ..games.base import TERMINAL
from ..regressors.compiled import CompiledModel, predict_row
from ..sampling.decisions import pick, set_action, set_strategy_action
from ..sampling.rules_source import is_set_free
from ..sampling.strategies import current_strategy, regrets_met, strategy_at
from .predictions import match_set


class RowCoder(NamedTuple):
    """An encoder's functions as first-class functions of type `ENCODE` (`row_coder`), so one compiled walk serves
    every encoder: ``encode``, and with ``set_width`` > 0 the split pair (`FeatureEncoder`), which is the same pair
    as ``encode`` itself when the encoder is not split."""

    encode: Any
    encode_set: Any
    encode_action: Any
    set_width: int


def row_coder(encoder) -> RowCoder:
    """The encoder's functions pinned (their addresses looked up once: one compiled `_strategies`, cached on disk,
    for every encoder, where the dispatcher itself would compile one per encoder, in every process)."""
    from rcfr.features.encoders import ENCODE, _Pinned
    encode = _Pinned(encoder.encode, ENCODE)
    if not encoder.set_width:
        return RowCoder(encode, encode, encode, 0)
    return RowCoder(encode, _Pinned(encoder.encode_set, ENCODE), _Pinned(encoder.encode_action, ENCODE),
                    int(encoder.set_width))


@njit(cache=True, inline="always")
def _set_rows(coder, encoder_data, state, n, rows):
    """rows[a] = the features of action a at the set of `state`, a < n: with a split encoder the set's columns once,
    copied to every row, then each action's own."""
    w, width = coder.set_width, rows.shape[1]
    if w == 0:
        for a in range(n):
            rows[a, :] = 0.0
            coder.encode(encoder_data, state, a, rows[a])
        return
    rows[0, :] = 0.0
    coder.encode_set(encoder_data, state, 0, rows[0])
    for a in range(n):
        if a > 0:  # element by element: the walks run without numba's runtime (no array views)
            for c in range(w):
                rows[a, c] = rows[0, c]
            for c in range(w, width):
                rows[a, c] = 0.0
        coder.encode_action(encoder_data, state, a, rows[a])


@njit(cache=True, inline="always")
def model_strategy(model, coder, encoder_data, state, n, t, rows, scratch, sigma, f):
    """The strategy of the set whose (fast) game state is `state`, with n actions, into sigma[f:f+n]: rows[a]
    gets action a's features (`_set_rows`), sigma[f+a] its prediction, then regret matching on t x prediction
    in place (``match_set`` reads each entry before writing it). False if a prediction is not finite (then
    sigma[f:f+n] holds the predictions: the caller must refuse them)."""
    _set_rows(coder, encoder_data, state, n, rows)
    for a in range(n):
        sigma[f + a] = predict_row(model, rows[a], scratch)
        if not np.isfinite(sigma[f + a]):
            return False
    match_set(sigma, t, f, n, f, sigma)
    return True


@njit(cache=True)
def _strategies(model, coder, encoder_data, states, sizes, t, first, sigma, rows, scratch):
    """`model_strategy` for set i (state states[i], sizes[i] actions) into sigma[first[i]:...]; -1, or the
    first set whose prediction is not finite."""
    for i in range(states.shape[0]):
        if not model_strategy(model, coder, encoder_data, states[i], sizes[i], t, rows, scratch, sigma, first[i]):
            return i
    return -1


def model_strategies(model, encoder, states, sizes, t: float) -> np.ndarray:
    """The strategies (concatenated, set after set) of the sets at these fast `states` ((sets, width) int64),
    with `sizes` actions each, from compiled `model` at iteration t (`model_strategy`). The model must read
    the encoder's rows: a width that differs is refused, naming both."""
    if not isinstance(model, CompiledModel):
        raise TypeError(f"model must be a CompiledModel (rcfr.regressors.compile_model), got {type(model).__name__}")
    if model.width != encoder.num_features:
        raise ValueError(f"the model reads rows of {model.width} features but the encoder writes "
                         f"{encoder.num_features} ({', '.join(encoder.names)}): fit the model on this encoder's rows")
    states = np.ascontiguousarray(states, np.int64)
    sizes = np.ascontiguousarray(sizes, np.int64)
    if states.ndim != 2 or sizes.shape != (len(states),) or (sizes.size and sizes.min() < 1):
        raise ValueError(f"states must be (sets, width) and sizes (sets,) of counts >= 1, got {states.shape} and "
                         f"{sizes.shape}")
    first = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    sigma = np.empty(int(sizes.sum()))
    rows = np.empty((int(sizes.max(initial=1)), model.width))
    bad = _strategies(model, row_coder(encoder), encoder.data, states, sizes, float(t), first, sigma, rows, model.scratch())
    if bad >= 0:
        raise ValueError(f"the compiled model predicted a non-finite value for set {bad} (state {states[bad].tolist()})")
    return sigma


# ---- the models evaluated inside the sampling walks (issue 34, item 1) ---------------------------------
class RowReservoir(NamedTuple):
    """A bounded reservoir of (feature row, sampled regret, iteration) examples that the walk writes where it meets
    the traverser's set (``targets="rows"``, Deep CFR's memory): the fits read these rows, so no state or sum per
    set is kept for them. Example k offered (``seen``) replaces a uniform slot with probability capacity / (k + 1)
    (Algorithm R), the draws from its own splitmix64 stream (``rng``), so the walk's samples are those of the other
    targets; with ``recent`` example k goes to slot k mod capacity instead (a window of the freshest rows, what
    bootstrapped targets want: each already carries the model's history, and a uniform sample of a long run is
    mostly rows whose targets older models wrote). ``scale`` is 1 / traversals (the targets' mean over an iteration's traversals); ``now`` the iteration.
    With ``bootstrap`` (targets="bootstrap") the value is the bootstrapped target instead: (t x the traverser's
    model's prediction of the row + the sampled regret) / now, the estimate's cumulative regret plus the new
    sample, clipped at zero when ``bootstrap`` is `CLIPPED` (RCFR+). Capacity 0: the walk keeps nothing."""

    rows: np.ndarray  # float64[capacity, features]
    value: np.ndarray  # float64[capacity]
    t: np.ndarray  # int64[capacity]
    seen: np.ndarray  # int64[1]: examples offered so far
    rng: np.ndarray  # uint64[1]
    scale: np.ndarray  # float64[1]
    now: np.ndarray  # int64[1]
    bootstrap: np.ndarray  # int64[1]: 0 (sampled regrets), `BOOTSTRAPPED` or `CLIPPED`
    player: np.ndarray  # int64[1]: the traverser (whose model bootstraps)
    recent: np.ndarray  # int64[1]: 1 keeps the last `capacity` rows offered (a window; no draws) instead


BOOTSTRAPPED, CLIPPED = 1, 2


def row_reservoir(capacity: int, width: int, seed: int, traversals: int, bootstrap: int = 0,
                  recent: bool = False) -> RowReservoir:
    """An empty `RowReservoir` of `capacity` rows of `width` features (0: none kept); with `recent`, a window of
    the last `capacity` rows instead of a uniform sample of all."""
    return RowReservoir(rows=np.zeros((capacity, width)), value=np.zeros(capacity), t=np.zeros(capacity, np.int64),
                        seen=np.zeros(1, np.int64), rng=np.array([(seed * 0x9E3779B97F4A7C15 + 1) % 2 ** 64], np.uint64),
                        scale=np.array([1.0 / traversals]), now=np.zeros(1, np.int64),
                        bootstrap=np.array([bootstrap], np.int64), player=np.zeros(1, np.int64),
                        recent=np.array([int(recent)], np.int64))


@njit(cache=True, inline="always")
def _draw(rng, n):
    """A uniform integer in [0, n) from splitmix64 (its state in rng[0])."""
    z = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z % np.uint64(n))


@njit(cache=True, inline="always")
def _keep_rows(walk, s, value, v, n, e):
    """Offer the n examples (row of action a at state s, (value[e, a] - v) x scale, now) to the reservoir."""
    kept = walk.kept
    capacity = kept.value.shape[0]
    for a in range(n):
        seen = kept.seen[0]
        kept.seen[0] = seen + 1
        if kept.recent[0]:
            j = seen % capacity
        else:
            j = seen if seen < capacity else _draw(kept.rng, seen + 1)
        if j >= capacity:
            continue
        row = kept.rows[j]
        row[:] = 0.0
        walk.coder.encode(walk.data, s, a, row)
        target = (value[e, a] - v) * kept.scale[0]
        if kept.bootstrap[0]:
            p = kept.player[0]
            prediction = predict_row(walk.model0 if p == 0 else walk.model1, row, walk.scratch)
            target = (walk.t[p] * prediction + target) / kept.now[0]
            if kept.bootstrap[0] == CLIPPED and target < 0.0:
                target = 0.0
        kept.value[j] = target
        kept.t[j] = kept.now[0]


class WalkModel(NamedTuple):
    """Where a sampling walk gets a set's current strategy when no profile is kept: `bundles.State.model`. At a
    decision of player p at depth d the walk calls `model_strategy` with ``model0``/``model1``, the encoder's
    function and data, the walk's state of the history (the rules source's row) and ``t[p]``; the strategy goes
    to row d of ``work`` (``widest`` entries a depth), read again there later in the walk (`strategy_at`), so
    nothing per information set is kept. A non-finite prediction cannot raise in compiled code: the walk plays
    uniformly there and sets ``bad[0]``, and the solver raises after the traversals (`LeanSampledRCFR._check_walk`)."""

    model0: CompiledModel
    model1: CompiledModel
    coder: RowCoder  # the encoder's functions, pinned (`row_coder`): one compiled driver for every encoder
    data: Any  # the encoder's data
    t: np.ndarray  # float64[2]: each player's predictions are regret-matched on t x prediction (0: uniform)
    rows: np.ndarray  # (widest, features): one set's feature rows
    scratch: np.ndarray  # the models' work rows (`CompiledModel.scratch`, the wider of the two)
    work: np.ndarray  # float64[depths * widest]: the strategy made at each depth of the walk
    widest: int
    bad: np.ndarray  # int64[1]: 1 once a prediction was not finite
    kept: RowReservoir  # where the traverser's regrets go as feature rows (capacity 0: nowhere)


def zero_model(width: int) -> CompiledModel:
    """A compiled model that predicts 0 for every row of `width` features (a player not fit yet; with t = 0
    its strategies are uniform whatever it predicts)."""
    from ..regressors.compiled import _model
    return _model(width)


def walk_model(encoder, depths: int, widest: int) -> WalkModel:
    """A `WalkModel` for rows of `encoder`, walks at most `depths` deep and `widest` actions wide; both players
    unfit (t = 0: uniform strategies) until `with_model` gives them one."""
    width = encoder.num_features
    zero = zero_model(width)
    return WalkModel(model0=zero, model1=zero, coder=row_coder(encoder), data=encoder.data, t=np.zeros(2),
                     rows=np.zeros((max(widest, 1), width)), scratch=zero.scratch(),
                     work=np.zeros(max(depths, 1) * max(widest, 1)), widest=int(max(widest, 1)),
                     bad=np.zeros(1, np.int64), kept=row_reservoir(0, width, 0, 1))


def with_model(walk: WalkModel, player: int, model: CompiledModel, t: float) -> WalkModel:
    """`walk` with `player`'s compiled model replaced (its width checked) and its t set."""
    if not isinstance(model, CompiledModel):
        raise TypeError(f"model must be a CompiledModel (rcfr.regressors.compile_model), got {type(model).__name__}")
    if model.width != walk.rows.shape[1]:
        raise ValueError(f"the model reads rows of {model.width} features but the encoder writes "
                         f"{walk.rows.shape[1]}: fit the model on this encoder's rows")
    scratch = model.scratch()
    if scratch.shape[1] > walk.scratch.shape[1]:
        walk = walk._replace(scratch=scratch)
    walk.t[player] = float(t)
    return walk._replace(**{f"model{player}": model})


def is_walk_model(model) -> bool:
    """True for the numba type of a `WalkModel`."""
    return getattr(model, "instance_class", None) is WalkModel


@njit(cache=True, inline="always")
def _made(walk, s, n, d, p):
    """`model_strategy` of player p's model at state s (n actions) into work row d; uniform, and ``bad`` marked,
    where a prediction is not finite."""
    g = d * walk.widest
    compiled = walk.model0 if p == 0 else walk.model1
    work = walk.work
    if not model_strategy(compiled, walk.coder, walk.data, s, n, walk.t[p], walk.rows, walk.scratch, work, g):
        walk.bad[0] = 1
        for a in range(n):
            work[g + a] = 1.0 / n
    return work, g


@overload(current_strategy, inline="never")  # one copy of the model's arithmetic, however many walks call it
def _walk_strategy(model, tree, regrets, sigma, h, f, n, d, p, from_regrets):
    if is_walk_model(model):
        return lambda model, tree, regrets, sigma, h, f, n, d, p, from_regrets: _made(model, tree.states[h], n, d, p)
    if is_tree_walk_model(model):
        def strategy(model, tree, regrets, sigma, h, f, n, d, p, from_regrets):
            _replay(model, h)
            return _made(model.walk, model.state, n, d, p)
        return strategy


@overload(strategy_at, inline="always")
def _walk_strategy_at(model, sigma, f, d):
    if is_walk_model(model):
        return lambda model, sigma, f, d: (model.work, d * model.widest)
    if is_tree_walk_model(model):
        return lambda model, sigma, f, d: (model.walk.work, d * model.walk.widest)


@overload(regrets_met, inline="never")  # one copy, called once per traverser's history
def _walk_regrets_met(model, tree, h, value, v, n, e):
    if is_walk_model(model):
        def met(model, tree, h, value, v, n, e):
            if model.kept.value.shape[0] > 0:
                _keep_rows(model, tree.states[h], value, v, n, e)
        return met
    if is_tree_walk_model(model):
        def met(model, tree, h, value, v, n, e):
            if model.walk.kept.value.shape[0] > 0:
                _replay(model, h)
                _keep_rows(model.walk, model.state, value, v, n, e)
        return met


@overload(set_strategy_action, inline="always")
def _walk_set_strategy_action(model, tree, regrets, sigma, h, f, n, d, p, from_regrets, cached, I, stamp, rng):
    if is_walk_model(model) and is_set_free(tree):  # no set id to keep the draw under: one draw per visit
        def drawn(model, tree, regrets, sigma, h, f, n, d, p, from_regrets, cached, I, stamp, rng):
            work, g = current_strategy(model, tree, regrets, sigma, h, f, n, d, p, from_regrets)
            return pick(work, g, n, rng), work, g
        return drawn
    if is_walk_model(model) or is_tree_walk_model(model):
        def action(model, tree, regrets, sigma, h, f, n, d, p, from_regrets, cached, I, stamp, rng):
            work, g = current_strategy(model, tree, regrets, sigma, h, f, n, d, p, from_regrets)
            return set_action(regrets, work, g, n, False, cached, I, stamp, rng), work, g
        return action


# ---- on the compiled tree: the history's state replayed from the root -------------------------------
class TreeWalkModel(NamedTuple):
    """`WalkModel` for walks of the compiled tree, whose handles are history ids: at a set the walk's history
    is replayed from the root with the game's fast functions (``parent``/``action``: the game's arrays, forced
    moves collapsed as the compiler does) into ``state``, then as `WalkModel`. Costs a replay per decision (the
    history's depth in fast-game moves); kept: one state, one path."""

    walk: WalkModel
    fn_initial: Any
    fn_player: Any
    fn_moves: Any
    fn_child: Any
    game_data: Any
    parent: np.ndarray
    action: np.ndarray
    state: np.ndarray  # int64[width]
    tmp: np.ndarray  # int64[width]
    path: np.ndarray  # int64[deepest history + 1]


def tree_walk_model(game, walk: WalkModel) -> TreeWalkModel:
    """A `TreeWalkModel` for compiled `game` around `walk`."""
    from ..sampling.rules_source import FastFunction
    fast = game.rules.fast()
    functions = {f"fn_{k}": FastFunction(getattr(fast, role), role)
                 for k, role in (("initial", "initial"), ("player", "player"), ("moves", "num_children"),
                                 ("child", "child"))}
    return TreeWalkModel(walk=walk, **functions, game_data=fast.data,
                         parent=np.ascontiguousarray(game.parent, np.int32), action=np.ascontiguousarray(game.action),
                         state=np.zeros(fast.width, np.int64), tmp=np.zeros(fast.width, np.int64),
                         path=np.zeros(int(np.max(game.depth)) + 1, np.int64))


def is_tree_walk_model(model) -> bool:
    """True for the numba type of a `TreeWalkModel`."""
    return getattr(model, "instance_class", None) is TreeWalkModel


@njit(cache=True, inline="always")
def _settle_state(model, s, tmp):
    """Forced moves collapsed in place (`rcfr.compiler.replay`'s rule), copying by element (no allocation)."""
    data = model.game_data
    while model.fn_player(data, s) != TERMINAL and model.fn_moves(data, s) == 1:
        model.fn_child(data, s, 0, tmp)
        for j in range(s.shape[0]):
            s[j] = tmp[j]


@njit(cache=True, inline="always")
def _replay(model, h):
    """The fast state of compiled history h into ``model.state``."""
    parent, action, path, s, tmp, data = model.parent, model.action, model.path, model.state, model.tmp, model.game_data
    n = 0
    while parent[h] >= 0:
        path[n] = action[h]
        n += 1
        h = parent[h]
    model.fn_initial(data, s)
    _settle_state(model, s, tmp)
    for j in range(n - 1, -1, -1):
        model.fn_child(data, s, path[j], tmp)
        for i in range(s.shape[0]):
            s[i] = tmp[i]
        _settle_state(model, s, tmp)
