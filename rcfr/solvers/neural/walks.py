"""The two walks the Deep CFR family needs beyond `rcfr.sampling`: compiled trajectories over the history arrays.

* `fixed_walk` (ESCHER, McAleer et al. 2023): the traverser's actions are drawn from a fixed uniform
  sampling policy, the opponent's and chance's on-policy, and at each traverser history h of information
  set I the sample for (I, a) is ``sign * (V(h a) - sum_b sigma(I, b) V(h b))`` read off a history-value
  table V (player 0's values; sign +1 for player 0, -1 for player 1). No importance weight is applied, so
  with the exact V the expected sum per traversal is ``pi_u(I) * r(I, a)``: the counterfactual regret
  times the traverser's own reach under the uniform policy (one positive number per information set,
  which regret matching ignores).
* `rollouts`: trajectories of both players, each exploring with probability epsilon, that add the terminal
  utility (player 0's), importance-weighted by sigma / q over the moves below, to every history on the
  path (or, given a baseline per history, the control-variate estimate built from it bottom-up): the
  Monte Carlo targets of a learned history-value function (ESCHER's value network, DREAM's
  baselines). Given a visit, the mean target of h is the value of h under sigma; exploration keeps the
  actions sigma has dropped in the data, so their values do not go stale.

`history_values` is the exact counterpart (one bottom-up pass), for tests and diagnostics.
Random numbers come from the samplers' splitmix64 stream (`rcfr.sampling.decisions.uniform01`), one
uint64 of state owned by the caller, so walks are reproducible and resumable.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...sampling.decisions import uniform01
from ...tree import Game

CHANCE, TERMINAL = -1, -2


@njit(cache=True, inline="always")
def _draw(probs, start, n, rng):
    """Index in [0, n) drawn from probs[start:start + n] (summing to one) by the inverse CDF."""
    x = uniform01(rng)
    for k in range(n - 1):
        x -= probs[start + k]
        if x < 0.0:
            return k
    return n - 1


@njit(cache=True)
def fixed_walk(player, first_child, num_children, chance_prob, infoset, first_seq, sigma, values, traverser,
               samples, sums, squares, visits, opponent_visits, rng, counters):
    """`samples` ESCHER trajectories for `traverser`: per traverser sequence the summed samples (and their
    squares) and visit counts; per opponent information set its visit count; counters[1] += histories
    on the paths (terminal included)."""
    sign = 1.0 if traverser == 0 else -1.0
    for _ in range(samples):
        h = 0
        nodes = 1
        while player[h] != TERMINAL:
            p = player[h]
            n = num_children[h]
            c = first_child[h]
            if p == CHANCE:
                k = _draw(chance_prob, c, n, rng)
            else:
                f = first_seq[infoset[h]]
                if p == traverser:
                    v = 0.0
                    for a in range(n):
                        v += sigma[f + a] * values[c + a]
                    for a in range(n):
                        r = sign * (values[c + a] - v)
                        sums[f + a] += r
                        squares[f + a] += r * r
                        visits[f + a] += 1
                    k = min(np.int64(uniform01(rng) * n), n - 1)
                else:
                    opponent_visits[infoset[h]] += 1
                    k = _draw(sigma, f, n, rng)
            h = c + k
            nodes += 1
        counters[1] += nodes


@njit(cache=True)
def rollouts(player, first_child, num_children, chance_prob, infoset, first_seq, utility, sigma, epsilon, correct,
             baseline, samples, value_sums, value_counts, rng, counters, path, ratio):
    """`samples` trajectories in which both players draw from the epsilon-exploring profile
    ``epsilon / n + (1 - epsilon) sigma``; every history h on a path gets one count and a target for its
    value under sigma, built bottom-up with a fixed `baseline` b per history as control variate:
    ``u(h) = sum_a p(h, a) b(h a) + w (u(h k) - b(h k))`` for the sampled move k, p the mover's sigma (or
    chance's probabilities) and w = sigma / q (1 at chance; left out when `correct` is False: the
    negative control). Unbiased for any b that does not depend on the sample; b = 0 gives the terminal
    utility times the product of the importance weights below h, and b = the exact values gives them
    exactly. counters[1] += histories on the paths."""
    for _ in range(samples):
        h = 0
        d = 0
        while player[h] != TERMINAL:
            path[d] = h
            n = num_children[h]
            c = first_child[h]
            if player[h] == CHANCE:
                k = _draw(chance_prob, c, n, rng)
                ratio[d] = 1.0
            else:
                f = first_seq[infoset[h]]
                if uniform01(rng) < epsilon:
                    k = min(np.int64(uniform01(rng) * n), n - 1)
                else:
                    k = _draw(sigma, f, n, rng)
                ratio[d] = sigma[f + k] / (epsilon / n + (1.0 - epsilon) * sigma[f + k]) if correct else 1.0
            h = c + k
            d += 1
        u = utility[h]
        value_sums[h] += u
        value_counts[h] += 1
        below = h
        for j in range(d - 1, -1, -1):
            node = path[j]
            c = first_child[node]
            v = 0.0
            for a in range(num_children[node]):
                prob = chance_prob[c + a] if player[node] == CHANCE else sigma[first_seq[infoset[node]] + a]
                v += prob * baseline[c + a]
            u = v + ratio[j] * (u - baseline[below])
            value_sums[node] += u
            value_counts[node] += 1
            below = node
        counters[1] += d + 1


@njit(cache=True)
def _values(player, first_child, num_children, chance_prob, infoset, first_seq, utility, sigma, out):
    # histories are numbered breadth first, so every child comes after its parent
    for h in range(len(player) - 1, -1, -1):
        if player[h] == TERMINAL:
            out[h] = utility[h]
            continue
        c, n, v = first_child[h], num_children[h], 0.0
        for a in range(n):
            prob = chance_prob[c + a] if player[h] == CHANCE else sigma[first_seq[infoset[h]] + a]
            v += prob * out[c + a]
        out[h] = v


def history_values(game: Game, sigma: np.ndarray) -> np.ndarray:
    """Exact value (player 0's) of every history when both players follow `sigma` (global sequence ids)."""
    out = np.zeros(game.num_histories)
    _values(game.player, game.first_child, game.num_children, game.chance_prob, game.infoset,
            game.infoset_first_seq, game.utility, np.ascontiguousarray(sigma, np.float64), out)
    return out


class Walker:
    """The game's arrays in the walks' dtypes, the walks' RNG (seeded) and their node counter."""

    def __init__(self, game: Game, seed):
        self.game = game
        self.arrays = (np.ascontiguousarray(game.player, np.int8), np.ascontiguousarray(game.first_child, np.int32),
                       np.ascontiguousarray(game.num_children, np.int32),
                       np.ascontiguousarray(game.chance_prob, np.float64), np.ascontiguousarray(game.infoset, np.int32),
                       np.ascontiguousarray(game.infoset_first_seq, np.int32))
        self.utility = np.ascontiguousarray(game.utility, np.float64)
        self.rng = np.random.SeedSequence(seed).generate_state(1, np.uint64)
        self.counters = np.zeros(2, np.int64)
        self.path = np.zeros(int(game.depth.max()) + 2, np.int64)
        self.ratio = np.zeros(int(game.depth.max()) + 2)

    @property
    def nodes_touched(self) -> int:
        return int(self.counters[1])

    def fixed(self, sigma: np.ndarray, values: np.ndarray, traverser: int, samples: int):
        """(sums, squares, visits per global sequence; visits per information set of the opponent)."""
        g = self.game
        sums, squares = np.zeros(g.num_sequences), np.zeros(g.num_sequences)
        visits, opponent = np.zeros(g.num_sequences, np.int64), np.zeros(g.num_infosets, np.int64)
        fixed_walk(*self.arrays, np.ascontiguousarray(sigma, np.float64), np.ascontiguousarray(values, np.float64),
                   int(traverser), int(samples), sums, squares, visits, opponent, self.rng, self.counters)
        return sums, squares, visits, opponent

    def rollouts(self, sigma: np.ndarray, samples: int, epsilon: float = 0.0, correct: bool = True,
                 baseline: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(summed value targets, visit counts) per history; `baseline` (per history, default zeros: plain
        importance-weighted returns) is the control variate of `rollouts`."""
        g = self.game
        sums, counts = np.zeros(g.num_histories), np.zeros(g.num_histories, np.int64)
        baseline = np.zeros(g.num_histories) if baseline is None else np.ascontiguousarray(baseline, np.float64)
        rollouts(*self.arrays, self.utility, np.ascontiguousarray(sigma, np.float64), float(epsilon), bool(correct),
                 baseline, int(samples), sums, counts, self.rng, self.counters, self.path, self.ratio)
        return sums, counts

    def state_dict(self) -> dict[str, np.ndarray]:
        return {"rng": self.rng.copy(), "counters": self.counters.copy()}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        self.rng[:] = state["rng"]
        self.counters[:] = state["counters"]
