"""Evaluation past exact best response: a sampled lower bound on exploitability, and head-to-head matches.

`approx_exploitability` trains, for each player i, a *responder* against the frozen policy of the other
player, then scores it against that policy. Any policy's value is at most the best-response value, so the
responders' mean value is a lower bound on (BR_0 + BR_1) / 2, exactly when scored by a walk of the whole
game, up to the CI's sampling error when scored by play-outs. The responder never needs the exact
best-response walk: it sees only sampled play (`rcfr.evaluation.approx_walks`).

Methods (how the responder is trained, within ``budget`` nodes touched per player):

* ``"es-br"``: external sampling for the responder alone. Each traversal samples chance and the opponent
  (from the frozen policy) and walks every responder action, adding payoffs to the responder's sequence-form
  terminal values; the sums are unbiased for the exact ones, and the bottom-up max over them is a pure best
  response to the sampled play. Unlike MCCFR it needs no regret matching: with the opponent frozen there is
  no equilibrium to track, and the best response to all samples so far is what regret matching approaches.
  A traversal walks the responder's whole subtree, so it needs games where that is affordable (Kuhn,
  Leduc, Goofspiel(5), Bluff(1,1)); one traversal over the budget is an error.
* ``"os-br"``: outcome sampling: one trajectory per traversal, the responder's actions drawn from
  ``eps`` * uniform + (1 - eps) * the policy's own row, payoffs importance-weighted by 1/q. Unbiased too and
  cheap per traversal, for games whose responder subtree is astronomical (Goofspiel(13), Bluff(2,2));
  at a budget far below the game's size most sets are met once, so the bound is loose.

A responder plays, at each set it met, its best action among those its traversals took at least
``min_visits`` times, where that beats the policy's own row by the same estimates; elsewhere the policy's
row (uniform at a set the policy lacks, with ``default="uniform"``). A best action read off one or two
sampled trajectories is mostly noise: on Goofspiel(13) against the uniform policy, at 1e7 nodes touched per
player, the bound was -0.03 chips with min_visits=1, 0.40 with 10, 0.58 with 30; on Bluff(2,2) 0.50, 0.76
and 0.71 (exact 0.92). Each setting gives a valid bound; scored exactly, the largest of several is one too,
scored by play-outs taking the largest biases it up. Scored exactly, each player also keeps the better of
its responder and the policy itself (a responder too), so the bound is never below 0.

`match_policies` samples play-outs of two policies in both seatings on the same chance draws (or with
chance enumerated), for ranking solvers where no best response is affordable.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..options import check_choice, check_float, check_int, check_seed
from ..policy import Policy
from ..policy.rules import CodePolicy, check_default, fast_game
from ..sources.abstraction import no_abstraction
from ..sources.rules import RulesGame
from ..stats import ci95
from ..tree import Game
from .approx_walks import COUNT_FIELDS, ERRORS, walk_samples
from .rules import walk as exact_walk

METHODS = ("es-br", "os-br")
#: how a responder is scored: "exact" walks the whole game, "sampled" plays `samples` play-outs, "auto"
#: is exact on a compiled game and sampled on a game walked by its rules
EVALUATIONS = ("auto", "exact", "sampled")
#: how a match treats chance: one sampled outcome per event, or every outcome weighted by its probability
MATCH_CHANCE = ("sample", "enumerate")
#: the options of `approx_exploitability` besides the game and policy (``default`` aside)
APPROX_OPTIONS = ("method", "budget", "seed", "samples", "evaluation", "eps", "min_visits", "chance")
#: the default of ``min_visits`` per method: external sampling takes every action at each visit, outcome
#: sampling one, importance-weighted (the best on Bluff(2,2) was 10, on Goofspiel(13) 30: module docstring)
MIN_VISITS = {"es-br": 1, "os-br": 20}


@dataclass(frozen=True)
class ApproxExploitability:
    """A lower bound on exploitability, (v_0 + v_1) / 2 in chips, where v_i is responder i's value (its own
    payoff) against the other player's part of the policy. ``ci95`` is the 95% half-width (0 when both
    responders were scored exactly); budgets are per player."""

    exploitability: float
    ci95: float
    responder_values: tuple[float, float]  # v_0, v_1: each the kept responder's (or the policy's) value
    responder_ci95: tuple[float, float]
    chosen: tuple[str, str]  # per player, "responder" or "policy" (the policy's own value was higher)
    method: str
    evaluation: str  # "exact" or "sampled"
    budget: int  # nodes touched allowed per player in training
    nodes_touched: tuple[int, int]  # spent in training
    traversals: tuple[int, int]
    responder_infosets: tuple[int, int]  # sets each responder met
    best_infosets: tuple[int, int]  # ... and plays its best action at (the others keep the policy's row)
    samples: int  # play-outs per player in scoring (0: exact)
    evaluation_nodes: tuple[int, int]  # nodes touched by the play-outs (-1: scored by a walk of the game)

    @property
    def low(self) -> float:
        return self.exploitability - self.ci95

    @property
    def high(self) -> float:
        return self.exploitability + self.ci95

    @property
    def informative(self) -> bool:
        """Whether the bound says anything: its interval lies above 0. A bound of 0 (no responder beat the
        policy, or one did by less than the sampling error) holds for every policy, an equilibrium or not."""
        return self.low > 0


class UninformativeBound(UserWarning):
    """`approx_exploitability` found no responder that beats the policy: its bound is 0 and says nothing."""


@dataclass(frozen=True)
class HeadToHead:
    """Policy a's expected payoff per game against policy b (chips), both seatings averaged, with the 95%
    half-width; ``seat_values`` is a's payoff as player 0 and as player 1 (``seat_ci95`` their half-widths:
    one seating alone estimates a seat's value, not the match's)."""

    value: float
    ci95: float
    seat_values: tuple[float, float]
    seat_ci95: tuple[float, float]
    samples: int  # play-out pairs (one per seating on the same chance draws)
    chance: str
    nodes_touched: int


def approx_exploitability(game, policy, method: str = "es-br", budget: int = 1_000_000, seed: int = 0, *,
                          samples: int = 10_000, evaluation: str = "auto", eps: float = 0.6,
                          min_visits: int | None = None, chance: str = "sample",
                          default: str | None = None) -> ApproxExploitability:
    """A lower bound on `policy`'s exploitability in `game` (compiled `Game` or `RulesGame`; a `Policy` or a
    `CodePolicy` of it) from responders trained within `budget` nodes touched per player (module docstring).
    ``samples`` play-outs per player score each responder when ``evaluation`` is sampled. ``chance="enumerate"``
    walks every chance outcome in training, weighted (less variance per node touched near an equilibrium:
    Leduc, CFR's average after 200 iterations, 1e6 nodes: bound 0.040 against 0.032 sampled, exact 0.054).
    A bound whose interval does not lie above 0 says nothing (`ApproxExploitability.informative`) and warns
    (`UninformativeBound`): raise the budget, or the policy may be near an equilibrium."""
    check_approx_options(method=method, budget=budget, seed=seed, samples=samples, evaluation=evaluation, eps=eps,
                         min_visits=min_visits, chance=chance)
    check_default(default)
    if min_visits is None:
        min_visits = MIN_VISITS[method]
    rules, fast = _source(game)
    frozen = _code_policy(game, rules, policy, "policy")
    default = frozen.default_for(default)
    if frozen.abstraction is not None:  # the responder's rows are full sets, the policy's abstract ones
        raise ValueError(f"approx_exploitability needs a policy of the full game; this one has rows per abstract set "
                         f"of {frozen.abstraction.name!r}: score it exactly (rcfr.evaluation.rules, or "
                         f"rcfr.evaluation.bluff for Bluff) or against others with match_policies")
    if evaluation == "auto":
        evaluation = "exact" if isinstance(game, Game) else "sampled"
    streams = np.random.SeedSequence(seed).generate_state(6, np.uint64)
    # the policy is a responder too: scored exactly, each player keeps the better of the two (both values
    # are at most the best response's); by play-outs the responder alone (a choice on them biases it up)
    own = exact_walk(rules, frozen, default)["value"] if evaluation == "exact" else None
    spent, scores = [], []
    for learner in (0, 1):
        counts, sets = _run(fast, rules, frozen, frozen, default, learner=learner, own_all=method == "es-br",
                            eps=eps, chance_all=chance == "enumerate", samples=2 ** 62, budget=budget,
                            min_visits=min_visits, chance_seed=streams[learner],
                            rng=streams[2 + learner:3 + learner].copy())
        responder = _responder(frozen, *sets)
        spent.append(counts)
        scores.append(_exact_score(rules, responder, default, learner, own) if own is not None else
                      _sampled_score(fast, rules, responder, default, learner, samples, streams[4 + learner]))
    (v0, h0, e0, c0), (v1, h1, e1, c1) = scores
    bound = ApproxExploitability(
        exploitability=(v0 + v1) / 2, ci95=math.hypot(h0, h1) / 2, responder_values=(v0, v1),
        responder_ci95=(h0, h1), chosen=(c0, c1), method=method, evaluation=evaluation, budget=budget,
        nodes_touched=tuple(c["nodes"] for c in spent), traversals=tuple(c["traversals"] for c in spent),
        responder_infosets=tuple(c["sets"] for c in spent), best_infosets=tuple(c["best"] for c in spent),
        samples=samples if evaluation == "sampled" else 0, evaluation_nodes=(e0, e1))
    if not bound.informative:
        warnings.warn(f"approx_exploitability: no responder beat the policy by more than its sampling error within "
                      f"budget={budget:,} nodes per player (bound {bound.exploitability:.4g} +- {bound.ci95:.2g}), so "
                      f"the bound says nothing about how far the policy is from an equilibrium; a larger budget may "
                      f"find a responder", UninformativeBound, stacklevel=2)
    return bound


def _exact_score(rules, responder: CodePolicy, default, learner: int, own: float) -> tuple:
    """(value, 0, -1, kept) of the better of `responder` and the policy (player 0's value `own`) for the learner,
    by a walk of the whole game."""
    value = exact_walk(rules, responder, default)["value"]
    value, own = (value, own) if learner == 0 else (-value, -own)
    return max(value, own), 0.0, -1, "responder" if value >= own else "policy"


def _sampled_score(fast, rules, responder: CodePolicy, default, learner: int, samples: int, stream) -> tuple:
    """(mean, 95% half-width, nodes touched, "responder") of the learner's payoff over `samples` play-outs of
    `responder`."""
    values = np.empty(samples)
    scored, _ = _run(fast, rules, responder, responder, default, learner=-1, own_all=False, eps=1.0,
                     chance_all=False, samples=samples, budget=0, min_visits=0, chance_seed=stream,
                     rng=np.array([stream ^ np.uint64(0x5851F42D4C957F2D)], np.uint64), values=values)
    mine = values if learner == 0 else -values
    return float(mine.mean()), _half_width(mine), scored["nodes"], "responder"


def check_approx_options(**options) -> dict:
    """`options` (a subset of `APPROX_OPTIONS`) after checking names and values, for callers that validate
    before any work (the experiment kit's ``run.approx``)."""
    unknown = sorted(set(options) - set(APPROX_OPTIONS))
    if unknown:
        raise ValueError(f"unknown approx_exploitability option(s) {', '.join(map(repr, unknown))}; allowed: "
                         f"{', '.join(APPROX_OPTIONS)}")
    checks = {"method": lambda v: check_choice("method", v, METHODS), "budget": lambda v: check_int("budget", v, 1),
              "seed": lambda v: check_seed("seed", v), "samples": lambda v: check_int("samples", v, 2),
              "evaluation": lambda v: check_choice("evaluation", v, EVALUATIONS),
              "eps": lambda v: check_float("eps", v, 0.0, 1.0, low_open=True),
              "min_visits": lambda v: v is None or check_int("min_visits", v, 1),
              "chance": lambda v: check_choice("chance", v, MATCH_CHANCE)}
    for name, value in options.items():
        checks[name](value)
    return options


def match_policies(game, policy_a, policy_b, samples: int = 10_000, seed: int = 0, *, chance: str = "sample",
                   default: str | None = None) -> HeadToHead:
    """Policy a against policy b in `game`: `samples` play-outs in each seating, the k-th of each on the same
    chance draws (``chance="sample"``) or with every chance outcome walked and weighted
    (``"enumerate"``, exact over chance, for games with few outcomes), paired into one estimate per k."""
    check_int("samples", samples, 2)
    check_seed("seed", seed)
    check_choice("chance", chance, MATCH_CHANCE)
    check_default(default)
    rules, fast = _source(game)
    a = _code_policy(game, rules, policy_a, "policy_a")
    b = _code_policy(game, rules, policy_b, "policy_b")
    default = default or (a.default if a.default == b.default else None)  # one flag for both seats
    streams = np.random.SeedSequence([seed, 23]).generate_state(3, np.uint64)
    seated = []
    nodes = 0
    for k, (first, second) in enumerate(((a, b), (b, a))):
        values = np.empty(samples)
        counts, _ = _run(fast, rules, first, second, default, learner=-1, own_all=False, eps=1.0,
                         chance_all=chance == "enumerate", samples=samples, budget=0, min_visits=0,
                         chance_seed=streams[0],
                         rng=streams[1 + k:2 + k].copy(), values=values)
        seated.append(values if k == 0 else -values)
        nodes += counts["nodes"]
    paired = (seated[0] + seated[1]) / 2
    return HeadToHead(value=float(paired.mean()), ci95=_half_width(paired),
                      seat_values=(float(seated[0].mean()), float(seated[1].mean())),
                      seat_ci95=(_half_width(seated[0]), _half_width(seated[1])), samples=samples,
                      chance=chance, nodes_touched=nodes)


# ---- helpers ---------------------------------------------------------------------------------------
def _half_width(values: np.ndarray) -> float:
    """The 95% half-width of the mean of independent draws (NaN for a single draw)."""
    half = ci95(values)
    return math.nan if half is None else half


def _source(game):
    """The rules and typed fast functions of a compiled or rules-path game: a game walked by its rules holds
    them (``fast``), a compiled one makes them from its rules."""
    if isinstance(game, (Game, RulesGame)) and getattr(game, "fast", None) is not None:
        return game.rules, game.fast
    if isinstance(game, Game):
        try:
            return game.rules, fast_game(game.rules)
        except ValueError as err:
            raise ValueError(f"sampled evaluation walks a game's fast path: unsupported for {err}") from None
    raise TypeError(f"game must be a compiled rcfr.Game or a RulesGame (rcfr.load_game(..., compiled=False)), "
                    f"got {type(game).__name__}")


def _code_policy(game, rules, policy, what: str) -> CodePolicy:
    """`policy` keyed by information-set code, after checking that it belongs to `game`."""
    if isinstance(policy, Policy):
        if isinstance(game, Game):
            game.check_same(what, policy.game)
        policy = CodePolicy.from_policy(policy)
    elif not isinstance(policy, CodePolicy):
        raise TypeError(f"{what} must be an rcfr.Policy or a CodePolicy, got {type(policy).__name__}")
    policy.check_rules(rules, what)
    return policy


def _run(fast, rules, seat0: CodePolicy, seat1: CodePolicy, default, *, learner, own_all, eps, chance_all,
         samples, budget, min_visits, chance_seed, rng, values=None):
    """One call of `walk_samples`: its counts by name and the learner's sets (codes, sizes, best actions)."""
    counts = np.zeros(len(COUNT_FIELDS), np.int64)
    rows = [(p.codes, p.first, np.asarray(p.probs, np.float64)) for p in (seat0, seat1)]
    for _, _, probs in rows:
        probs.setflags(write=False)
    abstractions = [(no_abstraction, fast.data, False) if p.abstraction is None else
                    (p.abstraction.code, p.abstraction.data, True) for p in (seat0, seat1)]
    sets = walk_samples(fast.initial, fast.player, fast.num_children, fast.child, fast.utility,
                        fast.infoset_code, fast.data, fast.width, *rows[0], *rows[1], *abstractions[0],
                        *abstractions[1], default == "uniform",
                        learner, own_all, float(eps), chance_all, int(samples), int(budget), int(min_visits),
                        np.uint64(chance_seed),
                        rng, np.zeros(0) if values is None else values, counts)
    named = dict(zip(COUNT_FIELDS, counts.tolist()))
    named["best"] = int((sets[2] >= 0).sum())
    if named["error"]:
        detail = ERRORS[named["error"]].format(code=named["code"], a=named["a"], b=named["b"])
        raise ValueError(f"sampling {rules.description()}: {detail}")
    return named, sets


def _responder(frozen: CodePolicy, codes: np.ndarray, sizes: np.ndarray, best: np.ndarray) -> CodePolicy:
    """`frozen` with a pure row (action `best`) at each of the responder's sets `codes` (its own row where
    `best` is -1)."""
    chosen = best >= 0
    codes, sizes, best = codes[chosen], sizes[chosen], best[chosen]
    own_sizes = np.diff(frozen.first)
    keep = ~np.isin(frozen.codes, codes)
    all_codes = np.concatenate([frozen.codes[keep], codes])
    all_sizes = np.concatenate([own_sizes[keep], sizes])
    pure = np.zeros(int(sizes.sum()))
    pure[np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) + best] = 1.0
    flat = np.concatenate([np.asarray(frozen.probs, np.float64)[np.repeat(keep, own_sizes)], pure])
    starts = np.concatenate([[0], np.cumsum(all_sizes)[:-1]]).astype(np.int64)
    order = np.argsort(all_codes, kind="stable")
    first = np.zeros(len(order) + 1, np.int64)
    np.cumsum(all_sizes[order], out=first[1:])
    gather = np.repeat(starts[order] - first[:-1], all_sizes[order]) + np.arange(first[-1], dtype=np.int64)
    return CodePolicy._trusted(frozen.description, frozen.fingerprint, all_codes[order], first, flat[gather],
                               default=frozen.default)
