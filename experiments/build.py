"""The one place where a validated config becomes library objects.

Every run is `make_solver(solver.name, solve_game, **solver.options, **injected)`, where

* `injected` holds the objects built from the regressor and features groups (``regressor``,
  ``features``) and the run seed (``seed``). Each is passed only to solvers whose constructor takes a
  keyword of that name: RCFR/RCFR+ take a regressor, sampling solvers take a seed. There is no list
  of special cases.
* the abstraction group picks what the solver runs on. A card abstraction (`rcfr.abstraction`:
  ranks, rank partitions, E[HS] buckets) runs the same solver on the full game with its regret store
  wrapped in `AbstractRegrets`. An action abstraction runs it on the abstract no-limit game, and its
  average policy is translated into the full game for evaluation.

Which components exist, and which parameters each takes, is `rcfr.experiments.components`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from rcfr import SOLVERS, TooLarge, load_game, make_rules, make_solver  # noqa: F401  (make_rules: validation)
from rcfr.distributed import check_sharding
from rcfr.features import make_features
from rcfr.policy import Policy
from rcfr.registry import keyword_names
from rcfr.regressors import make_regressor
from rcfr.solvers import CFRSolver
from rcfr.solvers.base import by_rules
from rcfr.solvers.rules_cfr import RulesCFRSolver
from rcfr.sources.rules import RulesGame
from rcfr.tree import Game

from .schema import ConfigError, ExperimentConfig, check_rules_path, resolve_shares


def make_game(spec: ExperimentConfig) -> Game | RulesGame:
    """The compiled game, or the game walked by its rules (``game.compiled``; `rcfr.load_game`)."""
    if spec.game.compiled is False:  # before the rules' fast functions compile
        _check_exact_points(spec, make_rules(spec.game.name, **spec.game.params))
    try:
        game = load_game(spec.game.name, compiled=spec.game.compiled, **spec.game.params)
    except TooLarge as err:  # game.compiled=true on a game above the compile limit
        raise ConfigError(f"game: {err}; or walk it by its rules: game.compiled=false (or null)") from None
    if by_rules(game):  # the rules path's config checks; the game answers the rest itself
        check_rules_path(spec)
        _check_exact_points(spec, game.rules)
    return game


#: seconds an exact evaluation point on the rules path may be estimated to take unless run.long_evaluations
LONG_EVALUATION = 3600.0


def _check_exact_points(spec: ExperimentConfig, rules) -> None:
    """Refuse evaluation points whose exact walk of every history is estimated to take over an hour each,
    unless ``run.long_evaluations`` asks for them (Bluff is scored on its much smaller public tree)."""
    from rcfr.budget import MAX_WALK_SECONDS, duration, walk_estimate
    from rcfr.evaluation import bluff as bluff_evaluation
    estimate = None if bluff_evaluation.walks(rules) else walk_estimate(rules)
    if estimate is None or estimate[1] <= LONG_EVALUATION:
        return
    histories, seconds = estimate
    cannot = seconds > MAX_WALK_SECONDS  # refused by the evaluation itself, asked or not
    if spec.run.long_evaluations and not cannot:
        return
    size = (f"each exact evaluation point walks every history of {rules.description()}: {histories:,} (estimated), about "
            f"{duration(seconds)} each, {spec.run.eval_points} points or more")
    raise ConfigError(f"{size}; it would not finish: choose smaller game parameters" if cannot else
                      f"{size}; set run.long_evaluations=true to run them anyway, or choose smaller game parameters")


def load_policy(spec: ExperimentConfig, game: Game | RulesGame, path):
    """A run's policy file (`runner.policy_file_name`) on `make_game(spec)`: a `Policy` of a compiled game, or a
    `CodePolicy` of a game walked by its rules, under the run's abstraction (its sets keyed by abstract code)."""
    from rcfr.abstraction import make_abstraction
    from rcfr.policy.rules import CodePolicy

    if not by_rules(game):  # a compiled run writes the full game's policy, whatever its abstraction
        return Policy.load(game, path)
    name = spec.abstraction.name
    abstraction = None if name == "none" else make_abstraction(game, name, **spec.abstraction.params)
    return CodePolicy.load(game.rules, path, abstraction=abstraction)


def make_component(kind: str, name: str, params: dict, game: Game):
    """A regressor (`make_regressor(name, **params)`) or the feature matrix of `game`
    (`make_features(game, name, **params)`)."""
    return make_regressor(name, **params) if kind == "regressor" else make_features(game, name, **params)


@dataclass
class Setup:
    """A solver, and how its average policy becomes a policy of the full game."""

    game: Game  # the full game, where every policy is evaluated
    solver: CFRSolver
    to_full: Callable[[Policy], Policy] = lambda policy: policy
    average_space: str = "full"  # on an abstraction, "abstract" ties the merged sets' averages
    #: a fresh solver from the same built parts (abstraction, abstract game, feature matrix): a new
    #: regressor and a new seed state each time, nothing rebuilt
    new_solver: Callable[[], CFRSolver] | None = None
    #: ``run.workers``, ``run.ray_address`` as `rcfr.evaluate` takes them ({}: one process)
    sharding: dict = field(default_factory=dict)

    def policy(self) -> Policy:
        from rcfr.abstraction import average_policy
        return self.to_full(average_policy(self.solver, self.average_space))

    def current_policy(self) -> Policy:
        """The profile the solver plays in its next iteration, in the full game."""
        return self.to_full(self.solver.current_policy())

    def size(self) -> int | None:
        """Values the solver keeps to produce its strategy (`solver.size()`: table entries, abstract
        sequences, or the regressors' sizes); None for a regressor of unknown size."""
        size = self.solver.size()
        return None if size is None else int(size)

    def spare(self) -> "Setup":
        """The same setup with a fresh solver (a run's warm-up runs it and throws it away)."""
        return replace(self, solver=self.new_solver())


def make_setup(spec: ExperimentConfig, game: Game) -> Setup:
    """The solver of a validated config on `game` (or on its abstraction); value errors that only
    the constructors can find become `ConfigError`s, before any work. The abstraction, the abstract
    game and the feature matrix are built here once; `Setup.spare` makes more solvers from them."""
    sharding = {}
    if spec.run.workers > 1:  # a reachable Ray address is checked here, before any work
        try:
            sharding = check_sharding(spec.run.workers, None, spec.run.ray_address)
        except ValueError as err:
            raise ConfigError(f"run.{err}") from None
    return replace(_setup(spec, game), sharding=sharding)


def _setup(spec: ExperimentConfig, game: Game) -> Setup:
    from rcfr import abstraction as abstractions

    name, abstraction = spec.solver.name, spec.abstraction
    try:
        if abstraction.name == "action":
            abstract_game = abstractions.action_abstraction(game, **abstraction.params)
            new_solver = _factory(spec, abstract_game, game.num_sequences,
                                  lambda options: make_solver(name, abstract_game, **options))
            return Setup(game, new_solver(), lambda policy: abstractions.translate(game, abstract_game, policy),
                         new_solver=new_solver)
        if abstraction.name == "none":
            new_solver = _factory(spec, game, game.num_sequences, lambda options: make_solver(name, game, **options))
            return Setup(game, new_solver(), new_solver=new_solver)
        takers = abstractions.card_abstraction_solvers()
        if name not in takers:
            raise ConfigError(f"solver {name!r} has no tabular regret store to run on a card abstraction; "
                              f"solvers that do: {', '.join(takers)} (action abstractions work with every solver)")
        params = dict(abstraction.params)
        kind = params.pop("partition") if abstraction.name == "card" else abstraction.name
        space = spec.solver.options.get("average_space", "full")
        built = abstractions.make_abstraction(game, kind, **params)
        new_solver = _factory(spec, game, game.num_sequences,
                              lambda options: abstractions.abstract_solver(name, game, built, **options))
        return Setup(game, new_solver(), average_space=space, new_solver=new_solver)
    except (ValueError, TypeError) as err:  # a value only a constructor can check
        raise ConfigError(f"solver {name!r} with abstraction {abstraction.name!r}: {err}") from None


def _factory(spec: ExperimentConfig, game: Game, sequences: int | None, construct) -> Callable[[], CFRSolver]:
    """A function making a new solver with `construct(options)`: the options and the feature matrix
    are resolved once, the regressor (which a solver fits in place) is made anew for each solver."""
    options = _options(spec, game, sequences)
    regressor = options.pop("regressor", None)

    def new_solver() -> CFRSolver:
        extra = {} if regressor is None else {"regressor": make_component("regressor", *regressor, game)}
        solver = construct({**options, **extra})
        if spec.run.workers > 1 and isinstance(solver, (CFRSolver, RulesCFRSolver)):  # full-width: sharded
            if isinstance(solver, RulesCFRSolver) and solver.sums != "fixed":
                # float sums group each sequence's terminal values by shard: at a tie of regrets the iterates
                # part with the shard count, and the kit promises that run.workers never changes the numbers
                raise ConfigError(f"run.workers={spec.run.workers} with {solver.solver_name} walked by its rules "
                                  "needs solver.options.sums=fixed (float sums' iterates depend on the shard count; "
                                  "docs/distributed.md), or run.workers=1")
            solver.distribute(spec.run.workers, None, spec.run.ray_address)
        if spec.run.shards > 1:
            _shard(solver, spec.run)
        return solver

    return new_solver


def _shard(solver, run) -> None:
    """``run.shards``: split the sampled solver's traversal batches (`rcfr.solvers.distributed_sampled.distribute`,
    or the Deep CFR family's own `distribute`) over ``run.workers`` Ray workers; refused, naming the field, for a
    solver that has no batches to split or a form that cannot be split."""
    from rcfr.solvers.distributed_sampled import distribute
    from rcfr.solvers.neural import NeuralCFR
    from rcfr.solvers.on_demand import LeanSampledRCFR
    from rcfr.solvers.sampled_regression import DenseSampledRCFR
    try:
        if isinstance(solver, NeuralCFR):
            solver.distribute(run.workers, run.shards, run.ray_address)
        elif isinstance(solver, (DenseSampledRCFR, LeanSampledRCFR)):
            distribute(solver, run.workers, run.shards, run.ray_address)
        else:
            raise ValueError(f"{solver.solver_name} has no traversal batches to shard; the solvers that do: sampled "
                             "RCFR(+) and the Deep CFR family (full-width CFR is sharded by run.workers alone)")
    except ValueError as err:
        raise ConfigError(f"run.shards={run.shards}: {err}") from None


def _options(spec: ExperimentConfig, game: Game, sequences: int | None) -> dict:
    """The solver's keywords; counts given as shares ("1%") are of the full game's `sequences`. The
    regressor comes as (name, params), to be built per solver."""
    accepted = keyword_names(SOLVERS[spec.solver.name])
    options = resolve_shares("solver.options", spec.solver.options, sequences)
    if "average_space" not in accepted:  # the kit's option (components.KIT_OPTIONS), applied by `Setup.policy`
        options.pop("average_space", None)
    if "regressor" in accepted:
        options["regressor"] = (spec.regressor.name, resolve_shares("regressor.params", spec.regressor.params,
                                                                    sequences))
    if "features" in accepted and options.get("features_on_demand"):  # the solver's encoder computes rows
        options["features"] = {"name": spec.features.name, **spec.features.params}
    elif "features" in accepted:
        options["features"] = make_component("features", spec.features.name, spec.features.params, game)
    if "seed" in accepted:
        options["seed"] = spec.run.seed
    return options
