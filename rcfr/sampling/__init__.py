"""Monte Carlo CFR samplers as compiled kernels over the compiled game tree."""

from .buffers import SAMPLERS, SamplerBuffers
from .estimate import RegretEstimate, estimate_regrets, exact_regrets, expected_average_increment

__all__ = ["RegretEstimate", "SAMPLERS", "SamplerBuffers", "estimate_regrets", "exact_regrets",
           "expected_average_increment"]
