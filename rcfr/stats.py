"""Confidence intervals: one definition for the library, the experiment kit and the benchmarks."""

from __future__ import annotations

import math

import numpy as np


def ci95(values) -> float | None:
    """Half-width of the 95% confidence interval of the mean of independent draws (Student's t with n - 1
    degrees of freedom: a few seeds get their honest width, many play-outs the normal one); None for
    fewer than two values, where no interval exists."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return None
    from scipy.stats import t  # on first use: `import rcfr` stays free of scipy
    return float(t.ppf(0.975, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size))
