"""Enumeration: the rules of a game walked breadth-first into the arrays of a `Game`, forced moves
collapsed, information sets renumbered player by player, perfect recall checked.

Games with a fast path (`GameRules.fast`, see `rcfr.compiler`) enumerate in numba; the others
through the rule methods (`_enumerate`), into identical arrays.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .. import kernels
from ..budget import COMPILE_BYTES, _too_large, history_limit
from ..games.base import CHANCE, TERMINAL, GameRules
from .model import _DTYPES, _HISTORY_ARRAYS, Game, _history_sequences, settle


def _enumerate(rules: GameRules, limit: int) -> dict:
    """Breadth-first enumeration of the rules into history arrays and first-encounter infosets,
    forced moves collapsed. Stops once more than `limit` histories have been generated, so a game
    too large to compile fails in seconds with a message instead of exhausting memory."""
    player, parent, action, depth, prob, infoset, utility = [], [], [], [], [], [], []
    first_child, num_children = [], []
    keys: dict[str, int] = {}
    infoset_player: list[int] = []
    infoset_actions: list[list[str]] = []
    infoset_history: list[int] = []
    queue = deque([(rules.initial_state(), -1, -1, 0, 1.0)])
    count = 1
    while queue:
        state, up, act, d, p_edge = queue.popleft()
        state, who = settle(rules, state)
        me = len(player)
        player.append(who)
        parent.append(up)
        action.append(act)
        depth.append(d)
        prob.append(p_edge)
        children: list[float] = []
        if who == TERMINAL:
            utility.append(float(rules.utility(state)))
            infoset.append(-1)
        elif who == CHANCE:
            utility.append(0.0)
            infoset.append(-1)
            outcomes = [(str(n), float(q)) for n, q in rules.chance_outcomes(state)]
            children = [q for _, q in outcomes]
            if not children or abs(sum(children) - 1.0) > 1e-9 or min(children) < 0:
                raise ValueError(f"{rules.name}: chance outcomes at {state!r} must be a distribution, "
                                 f"got {outcomes!r}")
        elif who in (0, 1):
            utility.append(0.0)
            key = str(rules.infoset_key(state))
            names = [str(a) for a in rules.actions(state)]
            if not names:
                raise ValueError(f"{rules.name}: decision state {state!r} has no legal action")
            if key not in keys:
                keys[key] = len(infoset_player)
                infoset_player.append(who)
                infoset_actions.append(names)
                infoset_history.append(me)
            i = keys[key]
            if infoset_player[i] != who or infoset_actions[i] != names:
                raise ValueError(f"{rules.name}: information set {key!r} mixes states with different "
                                 f"players or actions ({infoset_actions[i]} vs {names})")
            infoset.append(i)
            children = [1.0] * len(names)
        else:
            raise ValueError(f"{rules.name}: player() returned {who!r}; expected 0, 1, CHANCE or TERMINAL")
        first_child.append(count if children else -1)
        num_children.append(len(children))
        for a, q in enumerate(children):
            queue.append((rules.next_state(state, a), me, a, d + 1, q))
        count += len(children)
        if count > limit:
            raise _too_large(rules, count, limit, COMPILE_BYTES["python"], exact=False)
    arrays = dict(player=player, parent=parent, action=action, depth=depth, chance_prob=prob, infoset=infoset,
                  utility=utility, first_child=first_child, num_children=num_children)
    _check_depth(rules, depth[-1])
    arrays = {k: np.array(v, _DTYPES[k]) for k, v in arrays.items()}
    return dict(arrays=arrays, infoset_player=np.array(infoset_player, np.int8),
                infoset_size=np.array([len(a) for a in infoset_actions], np.int64),
                infoset_history=np.array(infoset_history, np.int64), keys=list(keys),
                action_names=infoset_actions)


def _check_depth(rules: GameRules, depth: int) -> None:
    if depth >= 2**15:
        raise ValueError(f"{rules.description()} is {depth} moves deep; compiled games allow {2**15 - 1}")


def _enumerate_fast(rules: GameRules, fast, limit: int) -> dict:
    from .. import compiler  # compiled on first use, not at import
    total, decisions, levels, widest = compiler.count_fast(fast, limit)
    if total > limit:
        raise _too_large(rules, total, limit, COMPILE_BYTES["fast"], exact=False)
    _check_depth(rules, len(levels) - 1)
    arrays = {k: np.empty(total, _DTYPES[k]) for k in _HISTORY_ARRAYS}
    if widest < 2**15:
        arrays["action"] = np.empty(total, np.int16)
    raw = compiler.enumerate_fast(fast, total, decisions, arrays)
    return dict(arrays=arrays, **raw)


RULE_METHODS = ("initial_state", "player", "actions", "chance_outcomes", "next_state", "utility", "infoset_key")


def _speaks_for(rules: GameRules, method: str) -> bool:
    """Whether the rules' `method` (a fast encoder or a size estimate) describes these rules: true unless a
    class below the one defining it overrides a rule method. A user's subclass that changes, say, the
    chance outcomes of a built-in game must not be compiled by the built-in encoder it cannot see."""
    mro = type(rules).__mro__
    owner = next(k for k in mro if method in vars(k))
    return not any(name in vars(k) for k in mro[:mro.index(owner)] for name in RULE_METHODS)


def compile_game(rules: GameRules, max_histories: int | None = None, fast: bool = True) -> Game:
    """Enumerate `rules` into a `Game` and check that both players have perfect recall.

    Uses the rules' fast path when they have one (``fast=False`` forces the rule methods).
    `max_histories` bounds the tree size (default: what the available memory holds, or
    ``$RCFR_MAX_HISTORIES``); a game whose `estimate_histories` exceeds it fails before any work."""
    path = "fast" if fast and type(rules).fast is not GameRules.fast and _speaks_for(rules, "fast") else "python"
    limit = history_limit(max_histories, COMPILE_BYTES[path])
    estimate = rules.estimate_histories() if _speaks_for(rules, "estimate_histories") else None
    if estimate is not None and estimate > limit:
        raise _too_large(rules, int(estimate), limit, COMPILE_BYTES[path], exact=True)
    spec = rules.fast() if path == "fast" else None
    raw = _enumerate_fast(rules, spec, limit) if spec is not None else _enumerate(rules, limit)
    arrays = raw["arrays"]
    if arrays["action"].dtype != np.int16 and int(arrays["num_children"].max()) < 2**15:
        arrays["action"] = arrays["action"].astype(np.int16)
    # Renumber information sets: player 0's first, each player's in first-encounter order.
    order = np.argsort(raw["infoset_player"], kind="stable")
    renumber = np.empty(len(order), np.int32)
    renumber[order] = np.arange(len(order), dtype=np.int32)
    kernels.renumber_infosets(arrays["infoset"], renumber)
    num_actions = raw["infoset_size"][order].astype(np.int32)
    first_seq = (np.cumsum(num_actions) - num_actions).astype(np.int32)
    game = Game(rules=rules, **arrays, infoset_player=raw["infoset_player"][order], infoset_first_seq=first_seq,
                infoset_num_actions=num_actions, infoset_parent_seq=np.full(len(order), -1, np.int32),
                infoset_history=raw["infoset_history"][order])
    if "keys" in raw:  # the rule methods gave the names already
        game.__dict__["infoset_keys"] = np.array([raw["keys"][i] for i in order], dtype=str)
        game.__dict__["action_names"] = np.array([a for i in order for a in raw["action_names"][i]], dtype=str)
    _attach_parent_sequences(game)
    return game


def _attach_parent_sequences(game: Game) -> None:
    """Fill `infoset_parent_seq`, failing if some player forgets its own earlier actions."""
    parent_seq = game.infoset_parent_seq
    broken = kernels.attach_parent_sequences(game.player, game.infoset, _history_sequences(game), parent_seq)
    if broken >= 0:
        key = game.infoset_key(int(game.infoset[broken]))
        raise ValueError(f"{game.rules.name}: information set {key!r} is reached after different own "
                         "actions (imperfect recall); use an abstraction over a perfect-recall game instead")
    if np.any(parent_seq >= game.infoset_first_seq):
        raise ValueError(f"{game.rules.name}: information sets are not in a topological order")
