"""The Deep CFR family by name: each member is `NeuralCFR` (the one sampled loop) with its paper's choices of
data source, targets and averaging as defaults."""

from __future__ import annotations

from ...registry import check_choice
from ...tree import Game
from .solver import NeuralCFR


class DeepCFR(NeuralCFR):
    """Deep CFR (Brown et al. 2019): external sampling, reservoir advantage memories with linear weights,
    the advantage network retrained from scratch each iteration, an average-policy network."""

    solver_name = "deep-cfr"

    def __init__(self, game: Game, *, regressor=None, features="auto", policy_regressor=None, traversals: int = 200,
                 capacity: int = 1_000_000, buffer_weighting: str | float = "linear",
                 averaging: str | float = "linear", seed: int = 0):
        super().__init__(game, sampler="external", average="network", regressor=regressor, features=features,
                         policy_regressor=policy_regressor, traversals=traversals, capacity=capacity,
                         buffer_weighting=buffer_weighting, averaging=averaging, seed=seed)


class SingleDeepCFR(NeuralCFR):
    """Single Deep CFR (Steinberger 2019): Deep CFR without the policy network; the average is the mixture
    of the per-iteration advantage networks' strategies weighted by t (exact here). ``sampler`` is
    "external" or "outcome"."""

    solver_name = "sd-cfr"

    def __init__(self, game: Game, *, sampler: str = "external", regressor=None, features="auto",
                 traversals: int = 200, capacity: int = 1_000_000, buffer_weighting: str | float = "linear",
                 averaging: str | float = "linear", epsilon: float = 0.6, keep_networks: bool = False, seed: int = 0):
        check_choice("sampler", sampler, ("external", "outcome"))
        super().__init__(game, sampler=sampler, average="mixture", regressor=regressor, features=features,
                         traversals=traversals, capacity=capacity, buffer_weighting=buffer_weighting,
                         averaging=averaging, epsilon=epsilon, keep_networks=keep_networks, seed=seed)


class DREAM(NeuralCFR):
    """DREAM (Steinberger et al. 2020): outcome sampling whose sampled values are corrected with learned
    history baselines (a value regressor over history features, refit before each traversal batch on a
    value memory of control-variate rollout targets, terminal values exact), SD-CFR averaging. The
    memory and the corrected targets are defaults because they halve Leduc's exploitability at 4.5e6
    nodes (docs/neural.md)."""

    solver_name = "dream"

    def __init__(self, game: Game, *, regressor=None, features="auto", value_regressor=None, traversals: int = 1000,
                 value_traversals: int | None = None, capacity: int = 1_000_000,
                 buffer_weighting: str | float = "linear", averaging: str | float = "linear", epsilon: float = 0.6,
                 value_exploration: float = 0.2, value_capacity: int | None = 1_000_000,
                 exact_terminals: bool = True, value_targets: str = "corrected", keep_networks: bool = False,
                 seed: int = 0):
        super().__init__(game, sampler="baseline", average="mixture", regressor=regressor, features=features,
                         value_regressor=value_regressor, traversals=traversals, value_traversals=value_traversals,
                         capacity=capacity, buffer_weighting=buffer_weighting, averaging=averaging, epsilon=epsilon,
                         value_exploration=value_exploration, value_capacity=value_capacity,
                         exact_terminals=exact_terminals, value_targets=value_targets, keep_networks=keep_networks,
                         seed=seed)


class ESCHER(NeuralCFR):
    """ESCHER (McAleer et al. 2023): the traverser samples from a fixed uniform policy, no importance
    weights; each visited history's regrets come from a learned history value function (refit on
    on-policy rollouts' control-variate targets before each traversal batch, terminal values exact);
    SD-CFR averaging (``average="network"`` for a policy network instead). On Leduc it needs large
    batches (thousands of value rollouts per fit): small ones leave the values too noisy for their
    differences to carry regrets (docs/neural.md)."""

    solver_name = "escher"

    def __init__(self, game: Game, *, regressor=None, features="auto", value_regressor=None, policy_regressor=None,
                 average: str = "mixture", traversals: int = 500, value_traversals: int | None = None,
                 capacity: int = 1_000_000, buffer_weighting: str | float = "linear",
                 averaging: str | float = "linear", value_exploration: float = 0.2, value_capacity: int | None = None,
                 exact_terminals: bool = True, value_targets: str = "corrected", keep_networks: bool = False,
                 seed: int = 0):
        super().__init__(game, sampler="fixed", average=average, regressor=regressor, features=features,
                         value_regressor=value_regressor, policy_regressor=policy_regressor, traversals=traversals,
                         value_traversals=value_traversals, capacity=capacity, buffer_weighting=buffer_weighting,
                         averaging=averaging, value_exploration=value_exploration, value_capacity=value_capacity,
                         exact_terminals=exact_terminals, value_targets=value_targets, keep_networks=keep_networks,
                         seed=seed)
