"""Exact evaluation in the full game: expected value, best responses, NashConv, exploitability, of a policy of
either kind of game `rcfr.load_game` returns. The kind is asked here once: a game walked by its rules goes to
its rules walks (`rules`, or the game's own structure where it has one: Bluff's public bid tree, `bluff`,
Phantom Tic-Tac-Toe's prebuilt sets, `phantom`), a compiled game to the sequence form below. The sampled
evaluation past exact best response, on either kind, is `approx` (`rcfr.approx_exploitability`).

On a compiled game everything runs on the sequence form: a best response for player i is one bottom-up pass over i's
own sequences that takes the best action's counterfactual value at each information set. This is
exact for any game where the best-responding player has perfect recall (which `compile_game`
checks), whatever the depths of an information set's histories or which actions are hidden.
"""

from __future__ import annotations

import numpy as np

from .. import kernels
from ..distributed import check_sharding, run_shards
from ..options import check_choice
from ..policy import Policy
from ..scores import Evaluation
from ..tree import Game

__all__ = ["WALKS", "Evaluation", "best_response", "evaluate", "expected_value", "exploitability", "nash_conv",
           "terminal_values"]

#: how a game walked by its rules is evaluated: "auto" uses the game's own structure where it offers one (Bluff's
#: public bid tree, Phantom Tic-Tac-Toe's prebuilt sets; one process), "general" the depth-first rules walk, which
#: alone shards (``workers``, ``shards``, ``cut``, ``ray_address``)
WALKS = ("auto", "general")


def _rules_evaluator(game, walk: str):
    """The module that evaluates a game walked by its rules (`WALKS`), or a TypeError for anything else."""
    from ..sources.rules import RulesGame
    if not isinstance(game, RulesGame):
        raise TypeError(f"game must be a game from rcfr.load_game (a compiled rcfr.Game or a game walked by its "
                        f"rules), got {type(game).__name__} {game!r:.60}")
    from . import bluff, phantom, rules
    if check_choice("walk", walk, WALKS) == "auto":
        for module in (bluff, phantom):
            if module.walks(game.rules):
                return module
    return rules


def _plans(game: Game, policy: Policy) -> list[np.ndarray]:
    if not isinstance(game, Game):
        raise TypeError(f"game must be a compiled rcfr.Game, got {type(game).__name__} {game!r:.60}")
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be an rcfr.Policy (e.g. solver.average_policy()), "
                        f"got {type(policy).__name__} {policy!r:.60}")
    game.check_same("policy", policy.game)  # another game's arrays would be read past their ends
    return [game.views[p].plan(policy.local(p)) for p in (0, 1)]


def terminal_values(game: Game, against: dict[int, np.ndarray], workers: int = 1, shards: int | None = None,
                    ray_address: str | None = None) -> dict[int, np.ndarray]:
    """Each player p of `against`'s terminal values against the opponent's realization plan ``against[p]``.

    Sharding: the sparse products are split into `shards` blocks of rows (own sequences) with about equal
    nonzeros, computed here (``workers=1``) or on Ray workers (`rcfr.distributed.run_shards`) and concatenated.
    Each row is summed by one loop wherever it runs, so the numbers equal one process bit for bit, for any
    shard count."""
    workers, shards, ray_address = check_sharding(workers, shards, ray_address).values()
    if shards == 1:
        return {p: game.views[p].terminal_values(plan) for p, plan in against.items()}
    rows = min(game.views[p].num_sequences for p in against)
    if shards > rows:
        raise ValueError(f"shards={shards} is more than the {rows:,} rows (own sequences) of the smaller payoff "
                         f"matrix of {game.rules.description()}; pass fewer shards")
    tasks = [(p, lo, hi) for p in against for lo, hi in _row_blocks(game.views[p].payoff.indptr, shards)]
    common = {p: (game.views[p].payoff, plan) for p, plan in against.items()}
    blocks = run_shards(_block_values, common, tasks, workers=workers, ray_address=ray_address)
    return {p: np.concatenate([b for (q, _, _), b in zip(tasks, blocks) if q == p]) for p in against}


def _row_blocks(indptr: np.ndarray, shards: int) -> list[tuple[int, int]]:
    """`shards` runs of rows, none empty, with about equal nonzeros."""
    rows = len(indptr) - 1
    bounds = np.searchsorted(indptr, np.linspace(0, indptr[-1], shards + 1)[1:-1])
    bounds = np.concatenate(([0], np.clip(bounds, 1, rows - 1), [rows]))
    for k in range(1, shards):  # at least one row each
        bounds[k] = max(bounds[k], bounds[k - 1] + 1)
    for k in range(shards - 1, 0, -1):
        bounds[k] = min(bounds[k], bounds[k + 1] - 1)
    return [(int(bounds[k]), int(bounds[k + 1])) for k in range(shards)]


def _block_values(common, task) -> np.ndarray:
    """Rows lo..hi of one player's terminal values (module-level: Ray workers import it)."""
    p, lo, hi = task
    payoff, plan = common[p]
    start, stop = payoff.indptr[lo], payoff.indptr[hi]
    indptr = payoff.indptr[lo:hi + 1] - start
    return kernels.csr_matvec(indptr, payoff.indices[start:stop], payoff.data[start:stop], plan,
                              np.empty(hi - lo))


def expected_value(game, policy, **options) -> float:
    """Player 0's expected payoff when both players follow `policy` (a game walked by its rules: `evaluate`'s
    value, `options` as it takes them)."""
    if not isinstance(game, Game):
        return evaluate(game, policy, **options).value
    plans = _plans(game, policy)
    return float(plans[0] @ game.views[0].terminal_values(plans[1]))


def _best_response(game: Game, player: int, opponent_plan: np.ndarray,
                   values: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """`values`: the player's terminal values against `opponent_plan` when known (overwritten)."""
    view = game.views[player]
    values = view.terminal_values(opponent_plan) if values is None else values
    choice = np.empty(view.num_infosets, dtype=np.int64)
    value = kernels.best_response(values, view.infoset_first, view.infoset_size, view.infoset_parent, choice)
    return float(value), choice


def best_response(game: Game, policy: Policy, player: int) -> tuple[float, Policy]:
    """Player `player`'s best-response value (its own payoff) against the other's part of `policy`,
    and the profile where `player` plays a pure best response and the other player keeps `policy`."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    if not isinstance(game, Game):
        _rules_evaluator(game, "auto")  # a TypeError unless it is a game walked by its rules
        raise TypeError("best_response returns a compiled Policy; for a game walked by its rules the values are "
                        "rcfr.evaluate(game, policy).best_response_values")
    value, choice = _best_response(game, player, _plans(game, policy)[1 - player])
    view = game.views[player]
    probs = policy.probs.copy()
    mine = slice(view.offset, view.offset + view.num_sequences - 1)
    probs[mine] = 0.0
    probs[view.offset + choice - 1] = 1.0
    return value, Policy(game, probs)


def evaluate(game, policy, *, default: str | None = None, walk: str = "auto", workers: int = 1,
             shards: int | None = None, ray_address: str | None = None, **rules_options) -> Evaluation:
    """Value, best-response values, NashConv and exploitability of `policy` in `game`.

    A compiled game takes a `Policy`; ``workers > 1`` (or ``shards > 1``) splits the terminal values into blocks
    of rows run on Ray (see `terminal_values`): the same numbers bit for bit. A game walked by its rules takes a
    `CodePolicy` (or a compiled `Policy` of the same rules); `default="uniform"` plays uniformly at sets the
    policy lacks (a solver's policy already does), `walk` picks the walk (`WALKS`), and the general walk shards
    over Ray workers as docs/distributed.md says (`rules_options`: its ``cut``)."""
    if not isinstance(game, Game):
        module = _rules_evaluator(game, walk)
        if module.__name__.endswith(".evaluation.rules"):
            rules_options.update(workers=workers, shards=shards, ray_address=ray_address)
        if isinstance(policy, Policy):  # a compiled game's policy, keyed by the same rules' codes
            from ..policy.rules import CodePolicy
            policy = CodePolicy.from_policy(policy)
        return module.evaluate(game.rules, policy, default, **rules_options)
    if default not in (None, "uniform") or rules_options:
        raise ValueError(f"a compiled game's policy has a row at every set: default must be None or 'uniform', got "
                         f"{default!r}; options {sorted(rules_options)} are for games walked by their rules")
    check_choice("walk", walk, WALKS)
    plans = _plans(game, policy)
    values = terminal_values(game, {0: plans[1], 1: plans[0]}, workers, shards, ray_address)
    value = float(plans[0] @ values[0])
    br = (_best_response(game, 0, plans[1], values[0])[0], _best_response(game, 1, plans[0], values[1])[0])
    nash_conv = br[0] + br[1]
    return Evaluation(value=value, best_response_values=br, nash_conv=nash_conv,
                      exploitability=nash_conv / 2,
                      exploitability_mbb=1000.0 * nash_conv / 2 / game.big_blind)


def nash_conv(game, policy, **options) -> float:
    """NashConv = BR_0 + BR_1; `options` as `evaluate` takes them."""
    return evaluate(game, policy, **options).nash_conv


def exploitability(game, policy, unit: str = "chips", **options) -> float:
    """(BR_0 + BR_1) / 2, in chips (``unit="chips"``) or milli-big-blinds per game (``"mbb"``), of a policy of
    either kind of game; `options` as `evaluate` takes them (``default``, ``walk``, ``workers``, ...)."""
    if unit not in ("chips", "mbb"):
        raise ValueError(f"unit must be 'chips' or 'mbb', got {unit!r}")
    result = evaluate(game, policy, **options)
    return result.exploitability if unit == "chips" else result.exploitability_mbb
