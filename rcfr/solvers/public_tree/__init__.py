"""CFR and chance-sampled CFR of Liar's Dice / Bluff on its public bid tree (`rcfr.solvers.public_tree.cfr_walks`).

`make_solver("cfr" | "cscfr", game)` builds a `BluffPublicCFR` for a Bluff game walked by its rules
(``walk="auto"``, the default, where the options allow it; ``walk="public"`` asks for it on a compiled
Bluff too, and refuses what it cannot do; ``walk="general"`` keeps the general solver). The numbers are
those of the compiled solvers of the same name, iteration for iteration: vanilla CFR's alternating (or
simultaneous) updates with ``t ** power`` averaging; chance-sampled CFR drawing player 0's roll, then
player 1's, from the same splitmix64 stream per traversal, then walking the tree with scalars
(``sampled_walk="scalar"``, the default; ``"vector"``: the vector walk of every-roll CFR, the same tables bit
for bit, slower). Under the last-r-bids recall abstraction
(`bluff_last_bids`) regrets are per abstract set and averages per full set (full averaging, as the thesis).

Tables are preallocated at their final size (`rcfr.solvers.public_tree.cfr_walks`: one number per (set, action) pair and
table, one int64 per public node), float64 where that fits in the available memory and float32 otherwise
(``dtype``); the size is checked before anything is allocated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...budget import available_memory
from ...evaluation.bluff import decision_sets, roll_tables, walks, whole_policy
from ...evaluation.rules import evaluation_of
from ...games.dice import FACE_NAMES
from ...options import REGRET_MATCHING, UPDATES, Options, check_choice, check_float, check_power, check_seed
from ...policy.rules import CodePolicy
from ...sampling.buffers import seed_state
from ...sampling.bundles import BOTH
from ...sampling.decisions import pick
from ...scores import Evaluation
from ...sources.abstraction import CodeAbstraction
from ...sources.rules import RulesGame
from ...tree import Game
from ..base import IterativeSolver, by_rules
from . import cfr_walks as kernels
from .sampling_walks import external_walk, outcome_walk

WALKS = ("auto", "public", "general")
DTYPES = ("auto", "float64", "float32")
#: the solvers with a public-tree walk, and their default update schedule (external sampling: alternating only)
PUBLIC_SOLVERS = {"cfr": "alternating", "cscfr": "simultaneous", "es-mccfr": "alternating", "os-mccfr": "alternating"}
#: the sampled solvers of the public tree, walked with scalars once the rolls are drawn (`sampling_walks`)
SAMPLED = ("es-mccfr", "os-mccfr")
#: the options only the public-tree walk takes (the experiment kit accepts them, and `walk`, for these solvers)
PUBLIC_OPTIONS = ("dtype", "sampled_walk")
#: chance sampling on the public tree: one roll per player, or every roll (vanilla CFR)
PUBLIC_CHANCE_SAMPLING = ("single", "all")
#: the walk of a chance-sampled iteration (one roll per player): with scalars, or the vectors of every-roll CFR
#: (one entry each; slower, kept to compare with: the two give the same tables bit for bit)
SAMPLED_WALKS = ("scalar", "vector")


@dataclass(frozen=True)
class PublicTreeOptions(Options):
    """What a `BluffPublicCFR` was built with (a checkpoint records it). ``dtype`` is the tables' type after
    ``"auto"`` is settled. ``sampled_walk`` only chooses how a chance-sampled iteration is computed, never
    its numbers, so a checkpoint resumes across it."""

    SAME_RESULTS = ("sampled_walk",)

    solver: str = "cscfr"
    updates: str = "simultaneous"
    chance_sampling: str = "single"
    regret_matching: str = "rm"
    averaging: str | float = "uniform"
    seed: int = 0
    dtype: str = "float64"
    epsilon: float | None = None  # outcome sampling's exploration (None for the others)
    sampled_walk: str = "scalar"

    def __post_init__(self):
        check_choice("solver", self.solver, PUBLIC_SOLVERS)
        check_choice("updates", self.updates, UPDATES)
        check_choice("chance_sampling", self.chance_sampling, PUBLIC_CHANCE_SAMPLING)
        check_choice("regret_matching", self.regret_matching, REGRET_MATCHING)
        check_power("averaging", self.averaging)
        object.__setattr__(self, "seed", check_seed("seed", self.seed))
        check_choice("dtype", self.dtype, DTYPES[1:])
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", check_float("epsilon", self.epsilon, 0.0, 1.0, low_open=True))
        check_choice("sampled_walk", self.sampled_walk, SAMPLED_WALKS)

    @property
    def power(self) -> float:
        return check_power("averaging", self.averaging)


def recall_of(abstraction) -> int | None:
    """The r of a `bluff_last_bids` CodeAbstraction, None for another abstraction."""
    code = getattr(abstraction, "code", None)
    if not isinstance(abstraction, CodeAbstraction) or getattr(code, "__name__", "") != "_bluff_code":
        return None
    return int(abstraction.data[0][-1])


def public_walk_refusal(name: str, game, options: dict) -> str | None:
    """Why `make_solver(name, game, **options)` cannot take the public-tree walk (None if it can)."""
    rules = getattr(game, "rules", None)
    if name not in PUBLIC_SOLVERS:
        return f"solver {name!r} has no public-tree walk (those with one: {', '.join(PUBLIC_SOLVERS)})"
    if not isinstance(game, (Game, RulesGame)) or not walks(rules):
        return "the game is not the built-in Liar's Dice (rcfr.load_game('liars_dice', ...))"
    allowed = {"cfr": {"updates", "averaging", "abstraction"},
               "cscfr": {"updates", "chance_sampling", "regret_matching", "averaging", "average_mode",
                         "abstraction", "average_space", "seed", "sampled_walk"},
               "es-mccfr": {"regret_matching", "averaging", "average_mode", "average_space", "seed"},
               "os-mccfr": {"epsilon", "updates", "regret_matching", "averaging", "average_mode", "average_space",
                            "seed"}}[name] | {"dtype"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        return f"option(s) {', '.join(unknown)} (the public-tree {name} takes {', '.join(sorted(allowed))})"
    refused = {"chance_sampling": options.get("chance_sampling", "single") not in PUBLIC_CHANCE_SAMPLING,
               "average_mode": options.get("average_mode", "stochastic") != "stochastic",
               "average_space": options.get("average_space", "full") != "full",
               "abstraction": options.get("abstraction") is not None and recall_of(options["abstraction"]) is None}
    for field, bad in refused.items():
        if bad:
            return f"{field}={options[field]!r} (the public-tree walk offers chance_sampling 'single' or 'all', " \
                   f"average_mode 'stochastic', average_space 'full', abstraction bluff_last_bids or none)"
    return None


def bluff_solver(name: str, game, walk: str, options: dict):
    """The `BluffPublicCFR` that `make_solver` builds for `name` on `game`, or None for the general solver:
    ``walk="auto"`` takes the public tree on a Bluff walked by its rules where the options allow it,
    ``"public"`` asks for it (an error saying why not), ``"general"`` never takes it."""
    walk = check_choice("walk", walk, WALKS)
    if walk == "general":
        return None
    why = public_walk_refusal(name, game, options)
    if why is None and (walk == "public" or by_rules(game)):
        return BluffPublicCFR(game, name, **options)
    if walk == "public" and why is not None:
        raise ValueError(f"walk='public': {name} on {getattr(game, 'name', game)!r} cannot walk the public tree: {why}")
    return None


class BluffPublicCFR(IterativeSolver):
    """Vanilla CFR (``solver="cfr"``, or ``"cscfr"`` with ``chance_sampling="all"``) or chance-sampled CFR
    (``"cscfr"``) of Bluff on its public tree, full game or last-r-bids recall (module docstring).
    ``exploitability()`` evaluates the average exactly from the table, without building a policy.
    ``nodes_touched`` counts the public nodes (bid sequences) the update walks entered; external sampling
    (``"es-mccfr"``) counts histories, as the general walk does."""

    chunk = 1

    def __init__(self, game: Game | RulesGame, solver: str = "cscfr", *, updates: str | None = None,
                 chance_sampling: str | None = None, regret_matching: str = "rm", averaging: str | float = "uniform",
                 average_mode: str = "stochastic", abstraction=None, average_space: str = "full", seed: int = 0,
                 dtype: str = "auto", epsilon: float | None = None, sampled_walk: str = "scalar"):
        given = {"abstraction": abstraction} if solver == "cfr" else {
            "abstraction": abstraction, "average_mode": average_mode, "average_space": average_space,
            "chance_sampling": chance_sampling or "single"}
        if solver in SAMPLED:  # what it does not take is refused when given
            given = {k: v for k, v in dict(given, updates=updates, chance_sampling=chance_sampling).items()
                     if v is not None}
        if epsilon is not None:
            given["epsilon"] = epsilon
        why = public_walk_refusal(solver, game, given)
        if why is not None:
            raise ValueError(f"BluffPublicCFR: {why}")
        self.solver_name = solver
        self.game, self.rules = game, game.rules
        if abstraction is not None:
            abstraction.check_rules(self.rules, "BluffPublicCFR")
        self.abstraction = abstraction
        nb = self.rules.num_bids
        self.recall = nb if abstraction is None else recall_of(abstraction)
        if not 1 <= self.recall <= nb:
            raise ValueError(f"abstraction 'bluff_last_bids': r (bids remembered) must be in [1, {nb}] (the longest "
                             f"bid sequence of {self.rules.description()}), got {self.recall}")
        q0, q1, c0, c1 = roll_tables(self.rules)
        self.probs, self.counts = (q0, q1), (c0, c1)
        self._index(abstraction is not None)
        dtype = self._dtype(check_choice("dtype", dtype, DTYPES))
        self.options = PublicTreeOptions(
            solver=solver, updates=updates or PUBLIC_SOLVERS[solver],
            chance_sampling="all" if solver == "cfr" else (chance_sampling or "single"),
            regret_matching=regret_matching, averaging=averaging, seed=seed, dtype=dtype,
            epsilon=(0.6 if epsilon is None else epsilon) if solver == "os-mccfr" else None,
            sampled_walk=sampled_walk)
        self.power = self.options.power
        self.clip = self.options.regret_matching == "rm+"
        self.regrets = np.zeros(self.sizes[1], dtype)
        self.avg = np.zeros(self.sizes[0], dtype)
        self.delta = np.zeros_like(self.regrets) if self.abstracted else self.regrets
        self.rng = seed_state(self.options.seed)
        self.iteration = 0
        self.nodes_touched = 0

    # ---- the index, sizes and memory -------------------------------------------------------------
    def _index(self, abstracted: bool) -> None:
        """The node offsets (``full``: one per bid mask; ``abstract``: one per kept mask and player) and the
        tables' sizes, refused before allocating if an index could overflow int64 or the offsets do not fit."""
        nb, rolls = self.rules.num_bids, [len(q) for q in self.probs]
        name = self.rules.description()
        if (1 << (nb - 1)) * max(rolls) * (nb + 1) >= 2**63:
            raise ValueError(f"BluffPublicCFR on {name}: the table index (2^{nb - 1} bid sequences x {max(rolls)} rolls "
                             f"x {nb} actions) would overflow int64")
        count = (1 << (nb - 1)) + ((1 << nb) if abstracted else 0)
        free = available_memory()
        if 8 * count > free:
            raise MemoryError(f"BluffPublicCFR on {name}: the node offsets alone need {8 * count / 2**30:.2f} GiB; "
                              f"this machine has {free / 2**30:.2f} GiB available")
        self.abstracted = abstracted
        self.full = np.empty(1 << (nb - 1), np.int64)
        self.abstract = np.empty((1 << nb) if abstracted else 0, np.int64)
        sizes = kernels.fill_offsets(nb, self.recall, rolls[0], rolls[1], self.full, self.abstract)
        #: entries of the average table (full sets) and of the regret table (abstract sets when abstracted)
        self.sizes = (int(sizes[0]), int(sizes[1] if abstracted else sizes[0]))
        if not abstracted:
            self.abstract = self.full
        #: the subtree sizes by which the scalar walk counts the full table's offsets (`kernels.spans`)
        self.spans, total = kernels.spans(nb, rolls[0], rolls[1])
        if total != self.sizes[0]:
            raise RuntimeError(f"BluffPublicCFR on {name}: subtree sizes add up to {total}, the table has {self.sizes[0]}")

    def _dtype(self, dtype: str) -> str:
        """float64 if asked, or by default where its tables take at most half the available memory (a
        checkpoint copies them); float32 otherwise. Refused, with the estimate and the machine's memory, if the
        type asked does not fit."""
        free = available_memory()
        entries = self.sizes[0] + self.sizes[1] * (2 if self.abstracted else 1)
        need = {t: entries * np.dtype(t).itemsize for t in DTYPES[1:]}
        if dtype == "auto":
            dtype = "float64" if 2 * need["float64"] <= free else "float32"
        if need[dtype] > free:
            hint = " (dtype='float32' halves it)" if dtype == "float64" else ""
            raise MemoryError(f"BluffPublicCFR on {self.rules.description()} with dtype={dtype!r}: its tables "
                              f"({entries:,} entries) need {need[dtype] / 2**30:.2f} GiB; this machine has "
                              f"{free / 2**30:.2f} GiB available{hint}")
        return dtype

    def size(self) -> int:
        """Representation size: the regret table's entries (abstract (set, action) pairs under an abstraction)."""
        return self.sizes[1]

    # ---- iterations ------------------------------------------------------------------------------
    def _walk(self, rolls, mode: int, regret_players: int, average_players: int, weight: float) -> np.ndarray:
        """One walk carrying `rolls` (per player: None for every roll at its probability, or one roll at weight
        1; both sampled: the scalar walk, unless ``sampled_walk="vector"``); the delta of an abstract walk is
        applied after it."""
        out = np.zeros(len(kernels.OUT_FIELDS))
        if mode == kernels.UPDATE and None not in rolls and self.options.sampled_walk == "scalar":
            kernels.sampled_walk(self.rules.num_bids, len(FACE_NAMES), rolls[0], rolls[1], self.counts[0],
                                 self.counts[1], self.recall, self.abstracted, self.regrets, self.avg, self.delta,
                                 self.abstract, self.spans, regret_players, average_players, float(weight),
                                 self.clip and not self.abstracted, out)
            return self._walked(mode, out)
        act, q, c = [], [], []
        for p in (0, 1):
            every = np.arange(len(self.probs[p])) if rolls[p] is None else np.array([rolls[p]])
            act.append(every)
            q.append(self.probs[p] if rolls[p] is None else np.ones(1))
            c.append(np.ascontiguousarray(self.counts[p][every]))
        kernels.walk(self.rules.num_bids, len(FACE_NAMES), act[0], act[1], q[0], q[1], c[0], c[1], self.recall,
                     self.abstracted, self.regrets, self.avg, self.delta, self.abstract, self.full, mode,
                     regret_players, average_players, float(weight), self.clip and not self.abstracted, out)
        return self._walked(mode, out)

    def _walked(self, mode: int, out: np.ndarray) -> np.ndarray:
        """After a walk: an abstract update's delta applied, the public nodes counted."""
        if mode == kernels.UPDATE and self.abstracted:
            kernels.apply_delta(self.regrets, self.delta, self.clip)
        self.nodes_touched += int(out[3])
        return out

    def _rolls(self) -> tuple[int | None, int | None]:
        """Every roll (vanilla), or player 0's roll then player 1's drawn from the stream (chance sampling)."""
        if self.options.chance_sampling == "all":
            return None, None
        return tuple(int(pick(q, 0, len(q), self.rng)) for q in self.probs)

    def _advance(self, iterations: int) -> None:
        o = self.options
        for _ in range(iterations):
            t = self.iteration = self.iteration + 1
            weight = float(t) ** self.power
            if o.solver == "es-mccfr":
                for p in (0, 1):
                    self._external(p, weight)
                continue
            if o.solver == "os-mccfr":
                for p in ((0, 1) if o.updates == "alternating" else (BOTH,)):
                    self._outcome(p, weight)
                continue
            if o.updates == "simultaneous":
                self._walk(self._rolls(), kernels.UPDATE, 3, 3, weight)
                continue
            for p in (0, 1):  # vanilla CFR averages the updating player, chance sampling the other (as compiled)
                credited = p if o.solver == "cfr" else 1 - p
                self._walk(self._rolls(), kernels.UPDATE, 1 << p, 1 << credited, weight)

    def _external(self, traverser: int, weight: float) -> None:
        """One external-sampling traversal (`rcfr.solvers.public_tree.sampling_walks`): the rolls, then the walk, drawing
        from the solver's stream in the general walk's order; counts its histories as the general walk does
        (the two roll nodes included)."""
        rolls = np.array(self._rolls(), np.int64)
        nodes = external_walk(self.rules.num_bids, len(FACE_NAMES), rolls, self.counts[0], self.counts[1], traverser,
                              self.regrets, self.avg, self.full, float(weight), self.clip, self.rng)
        self.nodes_touched += int(nodes) + 2

    def _outcome(self, traverser: int, weight: float) -> None:
        """One outcome-sampling trajectory (`rcfr.solvers.public_tree.sampling_walks`), its draws in the general walk's order."""
        nodes = outcome_walk(self.rules.num_bids, len(FACE_NAMES), self.probs[0], self.probs[1], self.counts[0],
                             self.counts[1], traverser, self.options.epsilon, self.regrets, self.avg, self.full,
                             float(weight), self.clip, self.rng)
        self.nodes_touched += int(nodes)

    # ---- policies and evaluation -------------------------------------------------------------------
    def exploitability(self) -> Evaluation:
        """Value, best responses, NashConv and exploitability of the average policy (full game), exact, from
        the table (one walk of the public tree with every roll; no policy built)."""
        out = self._walk((None, None), kernels.EVALUATE, 0, 0, 0.0)
        self.nodes_touched -= int(out[3])
        return evaluation_of(self.rules, dict(zip(kernels.OUT_FIELDS, out.tolist())))

    def _policy(self, table: np.ndarray, positive: bool) -> CodePolicy:
        codes, first = decision_sets(self.rules)
        probs = np.empty(int(first[-1]), table.dtype)
        kernels.fill_rows(self.rules.num_bids, codes, first, table, self.full, self.recall,
                          positive and self.abstracted, self.abstract, positive, probs)
        return whole_policy(self.rules, codes, first, probs)

    def current_policy(self) -> CodePolicy:
        """Regret matching on each full set's (abstract set's) regrets, as a `CodePolicy` of every decision set."""
        return self._policy(self.regrets, positive=True)

    def average_policy(self) -> CodePolicy:
        """The normalized average sums of every full decision set (uniform where none yet)."""
        return self._policy(self.avg, positive=False)

    def abstraction_identity(self) -> str:
        a = self.abstraction
        return "none" if a is None else f"{a.name} {a.identity}"

    # ---- checkpoints -------------------------------------------------------------------------------
    def _state(self) -> dict[str, np.ndarray]:
        return {"regrets": self.regrets.copy(), "avg": self.avg.copy(), "rng": self.rng.copy(),
                "iteration": np.array(self.iteration), "nodes_touched": np.array(self.nodes_touched)}

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        self.regrets[:] = state["regrets"]
        self.avg[:] = state["avg"]
        self.rng[:] = state["rng"]
        self.iteration, self.nodes_touched = int(state["iteration"]), int(state["nodes_touched"])
