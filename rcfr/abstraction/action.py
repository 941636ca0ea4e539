"""Action abstraction for no-limit one-card poker, and translation of its solution into the full game.

The abstract game (`NoLimitWagers`) is nlocp whose bets and raises are restricted to pot fractions
(H half pot, P pot, D double pot: after calling, raise by that fraction of the pot), rounded to the
nearest legal integer total, plus check/call, fold (when facing a wager) and all-in, always present.
Its action names are full-game names (``r5`` = raise to 5 chips in all), so it compiles and solves
like any game.

Bringing a solution into the full game (Schnizlein et al. 2009, soft translation with the geometric
similarity of Gilpin et al. 2008): the player's own actions stay in the abstraction (an abstract
wager is replayed as the same pot fraction of the real pot); an opponent's wager is read as a wager
of the abstraction -- never as check/call or fold -- by its size as a fraction of the pot: a real
fraction x between the neighbouring abstract fractions a < x < b (computed on the abstract game's
pot) is read as a with probability proportional to a/x and as b with probability proportional to
x/b; below the smallest or above the largest it is read as that one; an all-in is read as all-in.
Each reading is drawn once and kept for the rest of the hand, so the translated policy is a mixture
over translation outcomes; `translate` computes its realization plan exactly, as the expectation over
outcomes of the abstract policy's plan, and normalizes it to a behavioural policy (Kuhn's theorem).
"""

from __future__ import annotations

import numpy as np

from ..games.poker import NoLimitOneCardPoker, NoLimitState
from ..games.wagers import ACTION_ABSTRACTIONS, FRACTIONS, NoLimitWagers, _round, parse_wagers, pot_fraction  # noqa: F401
from ..policy import Policy
from ..tree import Game


# ---- translation ------------------------------------------------------------------------------------
def read_wager(real: NoLimitState, total: int, abstract: NoLimitState, options: list[str],
               stack: int) -> list[tuple[str, float]]:
    """How an opponent's raise to `total` in the real state is read in the abstract state:
    [(abstract raise name, probability)] over the neighbouring abstract raises in `options`."""
    raises = [a for a in options if a[0] == "r"]
    if not raises:
        raise ValueError(f"no abstract wager to read r{total} as at {abstract}")
    if total == stack:
        return [(f"r{stack}", 1.0)]
    x = pot_fraction(real, total)
    sizes = np.array([pot_fraction(abstract, int(a[1:])) for a in raises])
    if x <= sizes[0]:
        return [(raises[0], 1.0)]
    if x >= sizes[-1]:
        return [(raises[-1], 1.0)]
    hi = int(np.searchsorted(sizes, x))
    if sizes[hi] == x:
        return [(raises[hi], 1.0)]
    low, high = sizes[hi - 1] / x, x / sizes[hi]
    return [(raises[hi - 1], low / (low + high)), (raises[hi], high / (low + high))]


def replay_own(real: NoLimitState, abstract: NoLimitState, name: str, options: list[str], stack: int) -> str:
    """The real action for the player's own abstract action `name`: the same pot fraction of the real pot."""
    if name[0] != "r":
        return name
    total = int(name[1:])
    if total != stack:
        high = max(real.contrib)
        lowest = min(high + max(real.increment, 1), stack)
        total = min(max(_round(high + pot_fraction(abstract, total) * 2 * high), lowest), stack)
    real_name = f"r{total}"
    if real_name not in options:  # the real game cannot raise any more: calling is the closest action
        return "c"
    return real_name


def translate(game: Game, abstract_game: Game, policy: Policy) -> Policy:
    """The full-game policy of an abstract-game `policy` (see the module docstring); exact."""
    rules, abstract_rules = game.rules, abstract_game.rules
    if not (isinstance(rules, NoLimitOneCardPoker) and isinstance(abstract_rules, NoLimitOneCardPoker)):
        raise ValueError("translate needs a no-limit one-card poker game and an action abstraction of it")
    if (rules.cards, rules.stack, rules.ante) != (abstract_rules.cards, abstract_rules.stack, abstract_rules.ante):
        raise ValueError(f"abstract game {abstract_rules.description()} does not abstract {rules.description()}")
    abstract_game.check_same("policy to translate", policy.game)
    plan = np.zeros(game.num_sequences)
    start = rules.next_state(rules.next_state(rules.initial_state(), 0), 0)  # cards are read from keys
    names = [rules.deck.name(c) for c in range(rules.cards)]
    for p in (0, 1):
        _walk(game, abstract_game, policy, p, names, start, [(start, np.ones(len(names)))], plan)
    totals = np.bincount(game.sequence_infoset, plan, minlength=game.num_infosets)[game.sequence_infoset]
    uniform = 1.0 / game.infoset_num_actions[game.sequence_infoset]
    probs = np.where(totals > 0, plan / np.where(totals > 0, totals, 1.0), uniform)
    return Policy(game, probs)


def _rows(game: Game, names: list[str], history: tuple[str, ...]) -> tuple[np.ndarray, list[str]]:
    """Global first-sequence id of the information set of each card after `history`, and its actions."""
    keys = [f"{n}||{''.join(history)}" for n in names]
    sets = np.array([game.infoset_index[k] for k in keys])
    return game.infoset_first_seq[sets], game.actions_of(int(sets[0]))


def _walk(game, abstract_game, policy, player, names, real, readings, plan) -> None:
    """Depth-first over the real betting histories; `readings` lists (abstract state, weight per own card):
    the chance that the translation reads the opponent's wagers this way times the player's own
    abstract reach. No cards are needed: the translation never depends on them."""
    rules, abstract_rules = game.rules, abstract_game.rules
    actor = rules.player(real)
    if actor < 0:
        return
    options = rules.actions(real)
    children: dict[str, list] = {a: [] for a in options}
    if actor == player:
        first, _ = _rows(game, names, real.history)
        for state, weight in readings:
            abstract_first, abstract_options = _rows(abstract_game, names, state.history)
            for j, name in enumerate(abstract_options):
                reach = weight * policy.probs[abstract_first + j]
                real_name = replay_own(real, state, name, options, rules.stack)
                plan[first + options.index(real_name)] += reach
                children[real_name].append((abstract_rules.next_state(state, j), reach))
    else:
        for state, weight in readings:
            abstract_options = abstract_rules.actions(state)
            for name in options:
                read = [(name, 1.0)] if name[0] != "r" else \
                    read_wager(real, int(name[1:]), state, abstract_options, rules.stack)
                for abstract_name, q in read:
                    children[name].append((abstract_rules.next_state(state, abstract_options.index(abstract_name)),
                                           weight * q))
    for a, name in enumerate(options):
        if children[name]:
            _walk(game, abstract_game, policy, player, names, rules.next_state(real, a), children[name], plan)
