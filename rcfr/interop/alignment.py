"""Two compiled versions of one game, matched history by history, so policies move between them.

Two games are the same game when their trees agree position by position: the k-th legal action
(or chance outcome) of one is the k-th of the other, with equal chance probabilities, equal
player-0 utilities and the same partition into information sets. Names and keys may differ
entirely (``"r"`` vs ``"Bet"``, ``"Qh|Ks|rc/r"`` vs OpenSpiel's strings). Forced moves (decisions
with one legal action) are skipped on both sides, so a game that collapses them at compile time (or
ends the game instead, as OpenSpiel's Goofspiel does with the last card) matches one that keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..games.base import CHANCE, TERMINAL
from ..tree import Game

UTILITY_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Alignment:
    """Matching sequences of games `a` and `b` (global ids), forced information sets excluded."""

    a: Game
    b: Game
    sequences_a: np.ndarray
    sequences_b: np.ndarray

    def translate(self, policy):
        """`policy` (of either game) as a policy of the other game, of the same class."""
        if policy.game is self.a:
            source, target, to = self.sequences_a, self.sequences_b, self.b
        elif policy.game is self.b:
            source, target, to = self.sequences_b, self.sequences_a, self.a
        else:
            raise ValueError(f"{policy!r} belongs to neither {self.a!r} nor {self.b!r}")
        probs = np.ones(to.num_sequences)  # forced information sets: their only action
        probs[target] = policy.probs[source]
        return type(policy)(to, probs)


def _unforced(game: Game) -> np.ndarray:
    """Each history, or the first history below it that is not a forced move."""
    target = np.arange(game.num_histories)
    forced = np.flatnonzero((game.player >= 0) & (game.num_children == 1))
    for depth in np.unique(game.depth[forced])[::-1]:  # deepest first: a forced child is resolved before its parent
        skip = forced[game.depth[forced] == depth]
        target[skip] = target[game.first_child[skip]]
    return target


def _children(game: Game, histories: np.ndarray) -> np.ndarray:
    counts = game.num_children[histories]
    starts = np.repeat(game.first_child[histories], counts)
    return starts + np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)


@lru_cache(maxsize=8)
def align(a: Game, b: Game) -> Alignment:
    """Match `a` and `b` level by level; a ValueError names the first pair of histories that differ."""
    skip_a, skip_b = _unforced(a), _unforced(b)
    now_a, now_b = skip_a[:1], skip_b[:1]
    pairs = []

    def differ(i: int, what: str):
        return ValueError(f"{a.rules.description()} and {b.rules.description()} are not the same game: after "
                          f"{a.history_string(int(now_a[i]))!r} and {b.history_string(int(now_b[i]))!r}, {what}")

    while now_a.size:
        for what, x, y in (("the player to move", a.player[now_a], b.player[now_b]),
                           ("the number of moves", a.num_children[now_a], b.num_children[now_b])):
            bad = np.flatnonzero(x != y)
            if bad.size:
                i = bad[0]
                raise differ(i, f"{what} differs ({x[i]} vs {y[i]})")
        terminal = a.player[now_a] == TERMINAL
        bad = np.flatnonzero(terminal & (np.abs(a.utility[now_a] - b.utility[now_b]) > UTILITY_TOLERANCE))
        if bad.size:
            i = bad[0]
            raise differ(i, f"the utilities differ ({a.utility[now_a[i]]} vs {b.utility[now_b[i]]})")
        deciding = a.player[now_a] >= 0
        pairs.append((a.infoset[now_a[deciding]], b.infoset[now_b[deciding]]))
        kids_a, kids_b = _children(a, now_a), _children(b, now_b)
        chance = np.repeat(a.player[now_a] == CHANCE, a.num_children[now_a])
        bad = np.flatnonzero(chance & (np.abs(a.chance_prob[kids_a] - b.chance_prob[kids_b]) > 1e-12))
        if bad.size:
            i = int(np.searchsorted(np.cumsum(a.num_children[now_a]), bad[0], side="right"))
            raise differ(i, f"chance outcome {kids_a[bad[0]] - a.first_child[now_a[i]]} has probability "
                            f"{a.chance_prob[kids_a[bad[0]]]} vs {b.chance_prob[kids_b[bad[0]]]}")
        now_a, now_b = skip_a[kids_a], skip_b[kids_b]

    sets = np.unique(np.concatenate([np.stack(p, axis=1) for p in pairs]), axis=0)
    for side, game, column in (("first", a, 0), ("second", b, 1)):
        ids, counts = np.unique(sets[:, column], return_counts=True)
        if counts.max(initial=1) > 1:
            key = game.infoset_keys[ids[np.argmax(counts)]]
            raise ValueError(f"{a.rules.description()} and {b.rules.description()} are not the same game: the "
                             f"{side} game's information set {str(key)!r} is split in the other game")
    sizes = a.infoset_num_actions[sets[:, 0]]
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return Alignment(a, b, sequences_a=np.repeat(a.infoset_first_seq[sets[:, 0]], sizes) + offsets,
                     sequences_b=np.repeat(b.infoset_first_seq[sets[:, 1]], sizes) + offsets)
