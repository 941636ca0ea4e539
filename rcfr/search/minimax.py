"""Expectimax, Ballard's Star1 and Star2, and their sparse-sampling forms (thesis ch. 6).

One searcher covers the six algorithms: `pruning` is ``None`` (Expectimax), ``"star1"`` or
``"star2"``; `width` is ``None`` (every chance outcome, exact probabilities) or ``c`` (MCMS: ``c``
outcomes drawn with replacement, each weighted 1/c). A sampled outcome set is a function of (seed,
decision number, state, action) through a counter-based generator, so every visit of a pair (Star2's
probe and its full search, every deepening iteration) sees the same set, and ExpSS, Star1SS and
Star2SS with one seed search the same sampled tree: the pruning ones return exactly ExpSS's value.
Depth counts decisions; a leaf returns the game's heuristic.

The window follows the alpha-beta form of Algorithm 6 (Max and Min need not alternate). Star2 probes
each chance child with its first action only: at a Max child that gives a lower bound, at a Min
child an upper bound, used for a cut before the full search.
"""

from __future__ import annotations

import bisect
import itertools
import math
import time
import zlib

from ..options import check_float, check_int
from .base import SearchGame

MASK = (1 << 64) - 1


def splitmix64(x: int) -> int:
    """A 64-bit mixing function: counter-based random numbers, the same on every run and platform."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def stable_hash(key) -> int:
    return zlib.crc32(repr(key).encode())


def sample_set(ids, probs, width: int, stream: int):
    """`width` outcomes drawn with replacement from (ids, probs) by the counter-based generator
    `stream`; duplicates merged: (outcomes, weights count/width)."""
    cumulative = list(itertools.accumulate(probs))
    counts: dict[int, int] = {}
    for i in range(width):
        u = splitmix64(stream + i) / 2.0 ** 64
        j = min(bisect.bisect_right(cumulative, u * cumulative[-1]), len(ids) - 1)
        counts[j] = counts.get(j, 0) + 1
    chosen = sorted(counts)
    return [ids[j] for j in chosen], [counts[j] / width for j in chosen]


class OutOfBudget(Exception):
    """Raised inside a search when its time or node budget runs out."""


class StarSearch:
    """Depth-limited search with iterative deepening under a time and/or node budget."""

    def __init__(self, game: SearchGame, *, pruning: str | None = None, width: int | None = None,
                 depth: int | None = None, seconds: float | None = None, nodes: int | None = None,
                 seed: int = 0):
        if pruning not in (None, "star1", "star2"):
            raise ValueError(f"unknown pruning {pruning!r}; allowed: None, star1, star2")
        if width is not None:
            width = check_int("width", width, 1)
        if depth is None and seconds is None and nodes is None:
            raise ValueError("give a depth, seconds or nodes budget")
        depth = None if depth is None else check_int("depth", depth, 1)
        seconds = None if seconds is None else check_float("seconds", seconds, 0.0, low_open=True)
        nodes = None if nodes is None else check_int("nodes", nodes, 1)
        seed = check_int("seed", seed, 0)
        self.game, self.pruning, self.width = game, pruning, width
        self.depth, self.seconds, self.nodes = depth, seconds, nodes
        self.seed = seed
        self.decisions = 0
        self._stream = 0
        self.nodes_touched = 0
        self._samples: dict = {}
        self._deadline = math.inf
        self._node_limit = math.inf

    # -- public ---------------------------------------------------------------------------------
    def search(self, state, depth: int) -> tuple[float, int]:
        """(value, best action) of a full search to `depth`, sample sets kept from earlier calls."""
        g = self.game
        self._complete = True     # stays True when no leaf was cut by the depth limit
        return self._decision(state, depth, g.vmin, g.vmax, probe=False)

    def decide(self, state) -> tuple[int, float, int]:
        """(action, value estimate, depth reached) by iterative deepening within the budget; sampled
        outcome sets are fresh for each decision."""
        self.game.check_state(state)
        self._samples = {}
        self._stream = splitmix64(self.seed * 1_000_003 + self.decisions)
        self.decisions += 1
        start = time.perf_counter()
        self._deadline = start + self.seconds if self.seconds is not None else math.inf
        self._node_limit = self.nodes_touched + self.nodes if self.nodes is not None else math.inf
        max_depth = self.depth if self.depth is not None else 10_000
        best = None
        for d in range(1, max_depth + 1):
            try:
                value, action = self.search(state, d)
            except OutOfBudget:
                break
            best = (action, value, d)
            if self._complete:
                break
        self._deadline = self._node_limit = math.inf
        if best is None:   # not even depth 1 fitted: a depth-1 search regardless of the budget
            value, action = self.search(state, 1)
            best = (action, value, 1)
        return best

    # -- search ---------------------------------------------------------------------------------
    def _touch(self):
        self.nodes_touched += 1
        if self.nodes_touched >= self._node_limit or (
                self.nodes_touched & 255 == 0 and time.perf_counter() > self._deadline):
            raise OutOfBudget

    def _outcomes(self, state, action):
        ids, probs = self.game.chance(state, action)
        if self.width is None or len(ids) == 1:
            return ids, probs
        key = (state, action)
        cached = self._samples.get(key)
        if cached is None:
            cached = self._samples[key] = sample_set(ids, probs, self.width, self._stream ^ stable_hash(key))
        return cached

    def _decision(self, state, d, alpha, beta, probe):
        """(value, action) for player(state); `probe` searches the first action only."""
        g = self.game
        self._touch()
        if g.is_terminal(state):
            return g.utility(state), None
        if d == 0:
            self._complete = False
            return g.evaluate(state), None
        actions = g.actions(state)
        if probe:
            actions = actions[:1]
        prune = self.pruning is not None
        maximize = g.player(state) == 0
        best_v, best_a = (-math.inf if maximize else math.inf), None
        for a in actions:
            v = self._chance(state, a, d, alpha, beta)
            if (v > best_v) if maximize else (v < best_v):
                best_v, best_a = v, a
            if prune:
                if maximize:
                    alpha = max(alpha, v)
                else:
                    beta = min(beta, v)
                if beta <= alpha:
                    break
        return best_v, best_a

    def _chance(self, state, action, d, alpha, beta):
        g = self.game
        ids, probs = self._outcomes(state, action)
        children = [g.apply(state, action, o) for o in ids]
        if self.pruning is None:
            return sum(p * self._decision(s, d - 1, g.vmin, g.vmax, False)[0] for s, p in zip(children, probs))
        n = len(children)
        lo = [g.vmin] * n
        hi = [g.vmax] * n
        lower = g.vmin      # sum p_i lo_i (probabilities sum to one)
        upper = g.vmax
        if self.pruning == "star2" and d > 1:
            for i, (s, p) in enumerate(zip(children, probs)):
                if g.is_terminal(s):
                    continue
                a_i = (alpha - (upper - p * hi[i])) / p
                b_i = (beta - (lower - p * lo[i])) / p
                v, _ = self._decision(s, d - 1, max(g.vmin, a_i), min(g.vmax, b_i), probe=True)
                if g.player(s) == 0 and v > a_i:          # first action's value: a lower bound
                    lower += p * (v - lo[i])
                    lo[i] = v
                    if lower >= beta:
                        return lower
                elif g.player(s) == 1 and v < b_i:        # ... an upper bound at a Min child
                    upper += p * (v - hi[i])
                    hi[i] = v
                    if upper <= alpha:
                        return upper
        for i, (s, p) in enumerate(zip(children, probs)):
            a_i = (alpha - (upper - p * hi[i])) / p
            b_i = (beta - (lower - p * lo[i])) / p
            v, _ = self._decision(s, d - 1, max(g.vmin, a_i), min(g.vmax, b_i), False)
            lower += p * (v - lo[i])
            upper += p * (v - hi[i])
            lo[i] = hi[i] = v
            if v >= b_i:
                return lower
            if v <= a_i:
                return upper
        return sum(p * v for p, v in zip(probs, lo))
