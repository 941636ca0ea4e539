"""Imperfect-recall abstractions of the dice games (Lanctot 2013, ch. 5).

* ``drp_ir``: Die-Roll Poker where, from the second round on, a player remembers only the sum of their
  two dice (the betting stays remembered). Well-formed for DRP and skew well-formed for Skew-DRP(δ)
  (``load_game("dieroll", skew=δ)``).
* ``bluff_last_bids``: Bluff where a player remembers their own roll, whose turn it is and only the
  last `r` bids; sequences of at most `r` bids stay distinct (their length tells them apart).

And recall abstractions of the other large games, for comparisons at equal size (docs/large_rcfr.md):

* ``goofspiel_last_turns``: Goofspiel where a player remembers their hand, their score lead and the
  last `r` turns (own bid and result); r >= cards - 1 is the full game.
* ``latent_ttt_last_moves``: Latent Tic-Tac-Toe where a player remembers the revealed board and the
  last `r` known moves (r = 0: the board alone, without move order).
* ``phantom_ttt_forget``: the thesis's Phantom Tic-Tac-Toe abstractions FOSF, FOI, FOS and FOE (§5.5).

These four (and ``bluff_last_bids``) are computed in compiled code from the game's fast state, a function of
signature `rcfr.games.fast.ABSTRACT_CODE`: on a compiled game at each information set's first history
(`rcfr.sources.abstraction.abstract_codes`), so they build in seconds on games of millions of information
sets whose readable keys would take minutes; on a game walked by its rules (`rcfr.sources.rules.RulesGame`) they
are a `CodeAbstraction` the walks call at every decision. Abstract keys are integer codes (see each
function).

`bluff_counters` counts the (information set, action) pairs of Bluff and of its last-r-bids
abstractions in closed form, for games too large to compile (the thesis's Bluff(2,2), Table 5.1).
"""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit

from ..games.dice import FACE_NAMES, Bluff, DieRollPoker
from ..games.dice_fast import BIDS, LAST, MASK, NUM_BIDS, ROLL0
from ..games.goofspiel import Goofspiel
from ..games.goofspiel_fast import BID0, CARDS, DIFF, HAND0, TURN
from ..games.goofspiel_fast import HEADER as GOOF_HEADER
from ..games.goofspiel_history import own_history
from ..games.latent import LatentTicTacToe
from ..games.latent_fast import PREVIOUS as LATENT_PREVIOUS
from ..games.phantom import PhantomTicTacToe
from ..games.phantom_fast import CODE as PHANTOM_CODE
from ..games.phantom_fast import FORGET, forget_code
from ..games.phantom_fast import KNOWN as PHANTOM_KNOWN
from ..games.phantom_fast import PLAYER as PHANTOM_PLAYER
from ..options import check_choice, check_int
from ..regrets import FullRegret  # noqa: F401  (its old home; a measure, now in rcfr.regrets)
from ..sources.abstraction import CodeAbstraction
from ..sources.rules import RulesGame
from ..tree import Game
from ..tree.abstraction import Abstraction


def _rules(game: Game, kind: type, name: str):
    if not isinstance(game.rules, kind):
        raise ValueError(f"abstraction {name!r} needs a {kind.name!r} game, not {game.name!r}")
    return game.rules


def drp_ir(game: Game) -> Abstraction:
    """DRP-IR: second-round information sets keyed by the sum of one's own dice, not the dice."""
    _rules(game, DieRollPoker, "drp_ir")

    def key(k: str) -> str:
        dice, betting = k.split("|", 1)
        return f"{dice}|{betting}" if len(dice) < 2 else f"sum{sum(map(int, dice))}|{betting}"
    return Abstraction.from_keys(game, "drp_ir", key)


def _from_codes(game: Game | RulesGame, name: str, code, data) -> Abstraction | CodeAbstraction:
    """The abstraction given by `code` and its `data`: a `CodeAbstraction` for a game walked by its rules, its
    map of the compiled information sets for a compiled game."""
    abstraction = CodeAbstraction(name, game.rules, code, data)
    return game.as_abstraction(abstraction)


def _remembered(name: str, r, low: int, high: int, what: str) -> int:
    return check_int(f"abstraction {name!r}: r ({what} remembered)", r, low, high)


def bluff_last_bids(game: Game, r: int = 4) -> Abstraction:
    """Bluff keyed by (own roll, whose turn, the last `r` bids). Abstract key: own roll index * 2^bids + the
    mask of the last r bids."""
    rules = _rules(game, Bluff, "bluff_last_bids")
    r = check_int("abstraction 'bluff_last_bids': r (bids remembered)", r, 1, rules.num_bids)
    data = (np.append(rules.fast().data[0], r), np.zeros(0))
    return _from_codes(game, f"bluff_last_bids(r={r})", _bluff_code, data)


@njit(cache=True)
def _bluff_code(data, s, out):
    ints = data[0]
    n, r = ints[NUM_BIDS], ints[ints.size - 1]
    kept, k = 0, 0
    for b in range(n - 1, -1, -1):  # the r highest bids are the r most recent
        if k < r and s[MASK] & (1 << b):
            kept |= 1 << b
            k += 1
    out[0] = s[ROLL0 + s[BIDS] % 2] * (1 << n) + kept
    out[1] = s[LAST]  # the legal bids are those above the last one


#: How much of the score lead `goofspiel_last_turns` keeps.
LEADS = {"exact": 0, "sign": 1, "none": 2}


def goofspiel_last_turns(game: Game, r: int = 1, lead: str = "exact") -> Abstraction:
    """Goofspiel keyed by (whose turn, own hand, own score lead, the last `r` turns' own bid and result).
    The hand and lead are what the forgotten turns leave behind (the point cards are known), so
    ``r >= cards - 1`` is the full game; ``lead="sign"`` keeps only ahead / level / behind and
    ``lead="none"`` forgets the score, for coarser abstractions. Abstract key: hand * (2 total + 1) +
    lead + total, then per remembered turn (r of them, oldest first) * 3 (cards + 1) + 3 bid + result
    (0 before the first turn)."""
    rules = _rules(game, Goofspiel, "goofspiel_last_turns")
    n, total = rules.cards, sum(rules.points)
    high = n - 1
    while high > 0 and (2 ** n) * (2 * total + 1) * (3 * n + 3) ** high >= 2 ** 62:
        high -= 1
    r = _remembered("goofspiel_last_turns", r, 0, high, "turns")
    mode = LEADS[check_choice("goofspiel_last_turns lead", lead, list(LEADS))]
    data = (np.append(rules.fast().data[0], [r, mode]), np.zeros(0))
    suffix = "" if lead == "exact" else f", lead={lead}"
    return _from_codes(game, f"goofspiel_last_turns(r={r}{suffix})", _goofspiel_code, data)


@njit(cache=True)
def _goofspiel_code(data, s, out):
    ints = data[0]
    n, r, mode = ints[CARDS], ints[ints.size - 2], ints[ints.size - 1]
    total = 0
    for t in range(n):
        total += ints[GOOF_HEADER + t]
    p = 0 if s[BID0] == 0 else 1
    turn = s[TURN]
    hand = s[HAND0 + p]
    lead = s[DIFF] if p == 0 else -s[DIFF]
    if mode == 1:
        lead = (lead > 0) - (lead < 0)
    elif mode == 2:
        lead = 0
    cards = np.empty(n, np.int64)
    results = np.empty(n, np.int64)
    own_history(data, s, p, turn, cards, results)
    code = hand * (2 * total + 1) + lead + total
    for t in range(turn - r, turn):  # r slots, fixed width (0: before the first turn)
        code = code * (3 * n + 3) + (3 * cards[t] + results[t] if t >= 0 else 0)
    out[0] = code
    out[1] = hand  # the legal bids are the cards in hand


def latent_ttt_last_moves(game: Game, r: int = 0) -> Abstraction:
    """Latent Tic-Tac-Toe keyed by (whose turn, the revealed board, the last `r` known moves: every move but
    the opponent's pending one). r = 0 remembers the board without move order. Abstract key: the board
    in base 3, then per remembered move (r of them, oldest first) * 10 + square + 1 (0 before the first)."""
    _rules(game, LatentTicTacToe, "latent_ttt_last_moves")
    r = _remembered("latent_ttt_last_moves", r, 0, 14, "moves")  # 3^9 * 10^14 < 2^62
    return _from_codes(game, f"latent_ttt_last_moves(r={r})", _latent_code,
                       (np.append(game.rules.fast().data[0], r), np.zeros(0)))


@njit(cache=True)
def _latent_code(data, s, out):
    ints = data[0]
    r = ints[ints.size - 1]
    code = 0
    empty = 0
    for q in range(9):
        code = code * 3 + s[q]
        if s[q] == 0:
            empty |= 1 << q
    # the last r known moves, one digit each (square + 1; 0 before the first move): the known moves'
    # code modulo 10^r, a fixed width
    scale = 1
    for _ in range(r):
        scale *= 10
    out[0] = code * scale + s[LATENT_PREVIOUS] % scale
    out[1] = empty  # the legal moves are the empty squares of the revealed board


def phantom_ttt_forget(game: Game, forget: str = "fosf") -> Abstraction:
    """Phantom Tic-Tac-Toe where a player forgets some order of its tries (Lanctot 2013, §5.5), `forget`:
    ``"fosf"`` the order of the failures within each turn, ``"foi"`` how failures and placed marks
    interleave, ``"fos"`` which square was placed at which turn, ``"foe"`` every order; see
    `rcfr.games.phantom_fast.FORGET`. The squares tried, hence the legal ones, are always remembered.
    Abstract key: `forget_code` of the player's tries."""
    _rules(game, PhantomTicTacToe, "phantom_ttt_forget")
    forget = check_choice("abstraction 'phantom_ttt_forget': forget", forget, [k for k in FORGET if k != "none"])
    return _from_codes(game, f"phantom_ttt_forget({forget})", _phantom_code,
                       (np.array([FORGET[forget]], np.int64), np.zeros(0)))


@njit(cache=True)
def _phantom_code(data, s, out):
    p = s[PHANTOM_PLAYER]
    out[0] = forget_code(data[0][0], s[PHANTOM_CODE + p])
    out[1] = s[PHANTOM_KNOWN + p]  # the legal squares are those not known to be taken


def bluff_counters(dice1: int, dice2: int, r: int | None = None, forced: bool = True) -> int:
    """(Information set, action) pairs of both players in Bluff(dice1, dice2) (``r=None``) or in its
    last-`r`-bids abstraction. With ``forced=False`` the information sets whose only action is "bluff"
    (after the highest bid) are left out, as a compiled game with forced moves collapsed has them.

    With n bids, a set of bids before the last r is any subset of the bids below the first remembered one,
    so a remembered suffix starting at bid s is reached with both parities (players to move) when s > 0.
    A set whose last bid is b has n - b actions (the n - 1 - b higher bids and "bluff")."""
    if r is not None:
        r = check_int("r (bids remembered)", r, 1)
    n = (dice1 + dice2) * len(FACE_NAMES)
    rolls = [comb(d + len(FACE_NAMES) - 1, d) for d in (dice1, dice2)]  # multisets of each player's dice
    r = n if r is None else r

    def actions(last: int) -> int:
        return n - last if forced or last < n - 1 else 0

    total = n * rolls[0]  # the empty bidding sequence: player 0 to move, n bids
    # short sequences (1 <= length < r, remembered whole): C(last, length - 1) choices below the last bid
    for length in range(1, min(r, n + 1)):
        total += rolls[length % 2] * sum(comb(last, length - 1) * actions(last) for last in range(n))
    if r > n:
        return total
    # remembered suffixes of exactly r bids, first bid s and last bid b: C(b - s - 1, r - 2) between them
    for s in range(n):
        parities = (r % 2,) if s == 0 else (0, 1)
        per_roll = sum(rolls[p] for p in parities)
        if r == 1:
            total += per_roll * actions(s)
        else:
            total += per_roll * sum(comb(b - s - 1, r - 2) * actions(b) for b in range(s + 1, n))
    return total


#: the abstractions given by a code function, which also work on a game walked by its rules
CODE_ABSTRACTIONS = ("bluff_last_bids", "goofspiel_last_turns", "latent_ttt_last_moves", "phantom_ttt_forget")
RECALL_ABSTRACTIONS = {"drp_ir": drp_ir, "bluff_last_bids": bluff_last_bids,
                       "goofspiel_last_turns": goofspiel_last_turns, "latent_ttt_last_moves": latent_ttt_last_moves,
                       "phantom_ttt_forget": phantom_ttt_forget}
