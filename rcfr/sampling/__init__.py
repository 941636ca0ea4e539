"""Monte Carlo CFR samplers as compiled walks over the compiled game tree.

One driver (`driver`) runs every sampler; the walks are split by job: `outcome_walks` (one sampled
trajectory), `tree_walks` (external sampling and relatives), `chance_walks` (chance sampling over histories,
public chance sampling over the public tree, `public`); they share the decisions of `decisions`, the set
updates of `strategies`, the state source of `states` and the bundles of `bundles`."""

from .. import numba_inlining  # noqa: F401  (before any walk compiles: see its docstring)
from .buffers import SAMPLERS, SamplerBuffers
from .estimate import RegretEstimate, RegretSampler, estimate_regrets, exact_regrets, expected_average_increment

__all__ = ["RegretEstimate", "RegretSampler", "SAMPLERS", "SamplerBuffers", "estimate_regrets", "exact_regrets",
           "expected_average_increment"]
