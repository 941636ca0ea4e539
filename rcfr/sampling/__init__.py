"""Monte Carlo CFR samplers as compiled kernels over the compiled game tree."""

from .buffers import SAMPLERS, SamplerBuffers
from .estimate import (RegretEstimate, RegretSampler, estimate_regrets, exact_regrets,
                       expected_average_increment)

__all__ = ["RegretEstimate", "RegretSampler", "SAMPLERS", "SamplerBuffers", "estimate_regrets", "exact_regrets",
           "expected_average_increment"]
