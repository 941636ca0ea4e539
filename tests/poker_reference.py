"""The Python poker extractor that `rcfr.features.poker`'s encoder replaced, kept as the oracle the encoder
must reproduce exactly (tests/test_encoders.py): it replays each information set through the rules
(the per-pair formula `_pair` is shared; tests/test_features.py checks rows by hand).
"""

from __future__ import annotations

import numpy as np

from rcfr.features.poker import PAIR_FIELDS, _pair, _stack
from rcfr.games.hand_strength import hand_strength
from rcfr.games.poker import LimitPoker, NoLimitOneCardPoker


def extract(game, history: int | None = None):
    from rcfr.features import Features
    if history is not None and (isinstance(history, bool) or not isinstance(history, int) or history < 1):
        raise ValueError(f"features 'poker' option history must be None or an integer >= 1, got {history!r}")
    rules = game.rules
    if not isinstance(rules, (LimitPoker, NoLimitOneCardPoker)):
        raise ValueError(f"features 'poker' need poker rules (kuhn, ocp, leduc, nlocp), not "
                         f"{rules.name!r}; use features 'generic'")
    stack, strength = _stack(rules), hand_strength(game).ehs
    decisions = np.flatnonzero(game.player >= 0)
    sets, first = np.unique(game.infoset[decisions], return_index=True)
    representative = decisions[first]
    per_set = []  # (cards, history pairs most recent first, state)
    for i, h in zip(sets, representative):
        steps = []
        while game.parent[h] >= 0:
            steps.append(int(game.action[h]))
            h = game.parent[h]
        state, pairs = rules.initial_state(), []
        for a in reversed(steps):
            nxt = rules.next_state(state, a)
            if rules.player(state) >= 0:
                pairs.append(_pair(rules, stack, state, rules.actions(state)[a], nxt))
            state = nxt
        cards = [strength[i], rules.deck.rank(state.cards[-1]) + 1 if len(state.cards) > 2 else 0]
        per_set.append((cards, pairs[::-1], state))
    length = 1 + max(len(p) for _, p, _ in per_set)
    length = length if history is None else history
    width = len(PAIR_FIELDS)
    matrix = np.zeros((game.num_sequences, 2 + length * width))
    for i, (cards, pairs, state) in zip(sets, per_set):
        earlier = np.array(pairs[:length - 1], dtype=np.float64).ravel()
        for a, name in enumerate(rules.actions(state)):
            row = matrix[game.infoset_first_seq[i] + a]
            row[:2] = cards
            row[2:2 + width] = _pair(rules, stack, state, name, rules.next_state(state, a))
            row[2 + width:2 + width + earlier.size] = earlier
    names = ["hand_strength", "board_rank"] + [f"a{k}.{f}" for k in range(length) for f in PAIR_FIELDS]
    return Features(matrix, tuple(names))
