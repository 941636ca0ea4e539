"""The thesis's measurements as functions returning plain rows (lists of dicts): estimator quality
on Pig against exact values (Figs 6.2-6.4), round-robin matches (Table 6.1), the variance of UCT's
root estimates (Figs 7.1-7.2) and the playing strength of UCT with variance reduction (Fig 7.3)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..stats import ci95
from . import load_search_game, make_searcher
from .exact import PigValues, SolitaireValues
from .match import match
from .mcts import MCTS
from .pig import ROLL, STOP, Pig, PigSolitaire

Spec = dict   # {"name": searcher name, "options": {...}}


def _searcher(game, spec: Spec, seed: int):
    return make_searcher(spec["name"], game, seed=seed, **spec.get("options", {}))


def pig_trajectory(game: Pig, values: PigValues, seed: int, max_turns: int) -> list[tuple[int, tuple]]:
    """(turn, state) at the first roll-or-stop choice of each turn of one game played optimally by
    both sides with dice from `seed` (turns count both players' turns, from 1)."""
    rng = np.random.default_rng(seed)
    state, turn, points, chose = game.initial(rng), 1, [], False
    while not game.is_terminal(state) and turn <= max_turns:
        actions = game.actions(state)
        if len(actions) > 1 and not chose:
            points.append((turn, state))
            chose = True
        nxt = game.step(state, values.best_action(state), rng)
        if nxt[3] != state[3]:
            turn, chose = turn + 1, False
        state = nxt
    return points


def estimator_quality(algorithms: dict[str, Spec], *, goal: int = 100, games: int = 1, samples: int = 30,
                      max_turns: int = 40, seed: int = 0, progress: Callable | None = None) -> list[dict]:
    """Figs 6.2-6.4: at each decision point, `samples` runs of every algorithm; bias, variance and MSE
    of the returned value against the exact minimax value, and the mean regret of the chosen move."""
    game = Pig(goal=goal)
    values = PigValues(game)
    rows = []
    for g in range(games):
        for turn, state in pig_trajectory(game, values, seed * 1000 + g, max_turns):
            exact = values.value(state)
            for label, spec in algorithms.items():
                estimates, regrets, efforts = [], [], []
                for k in range(samples):
                    searcher = _searcher(game, spec, seed=hash((seed, g, turn, k)) & 0xFFFFFFF)
                    action, value, effort = searcher.decide(state)
                    estimates.append(value)
                    regrets.append(values.regret(state, action))
                    efforts.append(effort)
                e = np.array(estimates)
                rows.append({"game": g + 1, "turn": turn, "algorithm": label, "exact": exact,
                             "bias": float(e.mean() - exact), "variance": float(e.var()),
                             "mse": float(np.mean((e - exact) ** 2)), "regret": float(np.mean(regrets)),
                             "effort": float(np.mean(efforts))})
                if progress:
                    progress(rows[-1])
    return rows


def tournament(game, pairings: list[tuple[str, str]], players: dict[str, Spec], *, pairs: int,
               seed: int = 0, progress: Callable | None = None) -> list[dict]:
    """Table 6.1: for each (p1, p2), `pairs` seat-swapped matches sharing a seed; p1's win %."""
    rows = []
    for first, second in pairings:
        result = match(game, lambda g, s, spec=players[first]: _searcher(g, spec, s),
                       lambda g, s, spec=players[second]: _searcher(g, spec, s), pairs=pairs, seed=seed)
        rows.append({"game": game.name, "p1": first, "p2": second, **{k: float(v) for k, v in result.items()}})
        if progress:
            progress(rows[-1])
    return rows


VARIANCE_METHODS = {
    "UCT": {},
    "CV": {"control_variates": True},
    "CRN": {"common_random_numbers": True},
    "AV": {"antithetic": True},
    "CV+CRN": {"control_variates": True, "common_random_numbers": True},
}


def root_variance(methods: dict[str, dict], simulations: list[int], *, runs: int, turns: int = 10,
                  cap: int = 200, c: float = 100.0, seed: int = 0, progress: Callable | None = None) -> list[dict]:
    """Figs 7.1-7.2: UCT's estimates of the roll action's return and of the roll-minus-stop difference
    at the first decision of solitaire Pig, over `runs` independent searches per budget: bias^2,
    variance and MSE against the exact optimal values."""
    game = PigSolitaire(turns=turns, cap=cap)
    exact = SolitaireValues(game)
    start = game.initial()
    roll, stop = exact.action_value(start, ROLL), exact.action_value(start, STOP)
    rows = []
    for label, options in methods.items():
        for n in simulations:
            est = np.array([MCTS(game, c=c, simulations=n, leaf="rollout", recommend="mean",
                                 seed=seed * 1_000_003 + r * 7919 + n, **options).action_values(start)[1]
                            for r in range(runs)])
            for quantity, values, target in (("roll", est[:, 0], roll),
                                             ("difference", est[:, 0] - est[:, 1], roll - stop)):
                values = values[~np.isnan(values)]
                rows.append({"method": label, "simulations": n, "quantity": quantity, "exact": target,
                             "runs": len(values), "bias2": float((values.mean() - target) ** 2),
                             "variance": float(values.var(ddof=1)),
                             "mse": float(np.mean((values - target) ** 2))})
            if progress:
                progress(rows[-1])
    return rows


def play_solitaire(game, searcher, seed: int) -> float:
    rng = np.random.default_rng(seed)
    state = game.initial(rng)
    while not game.is_terminal(state):
        state = game.step(state, searcher.decide(state)[0], rng)
    return game.utility(state)


def solitaire_performance(methods: dict[str, dict], simulations: list[int], *, games: int,
                          game: str = "pig_solitaire", params: dict | None = None, c: float = 100.0, seed: int = 0,
                          checkpoint: Callable | None = None, every: int = 10) -> list[dict]:
    """Fig 7.3 (Pig, Can't Stop, Dominion): mean final score of UCT with each variance-reduction method per
    simulation budget in a solitaire, with a 95% confidence interval; game k uses the same dice seed
    for every method, and each method's gain over plain UCT is also given paired by game. Games are
    the outer loop: every `every` games, `checkpoint(rows so far)`."""
    solitaire = load_search_game(game, **(params or {}))
    scores = {(label, n): [] for label in methods for n in simulations}
    for k in range(games):
        for label, options in methods.items():
            for n in simulations:
                searcher = MCTS(solitaire, c=c, simulations=n, leaf="rollout", recommend="mean",
                                seed=seed * 1_000_003 + k, **options)
                scores[label, n].append(play_solitaire(solitaire, searcher, seed * 1_000_003 + k))
        if checkpoint and ((k + 1) % every == 0 or k + 1 == games):
            checkpoint(_performance_rows(scores))
    return _performance_rows(scores)


def _performance_rows(scores: dict) -> list[dict]:
    rows = []
    for (label, n), values in scores.items():
        values = np.array(values)
        rows.append({"method": label, "simulations": n, "games": len(values), **_mean_ci("mean_score", values)})
        if label != "UCT" and ("UCT", n) in scores:
            # paired with plain UCT on the same dice seeds: a tighter interval for the gain
            rows[-1].update(_mean_ci("gain_vs_uct", values - np.array(scores["UCT", n])))
    return rows


def _mean_ci(name: str, values: np.ndarray) -> dict:
    half = ci95(values)
    return {name: float(values.mean()), f"{name}_ci95": math.nan if half is None else half}
