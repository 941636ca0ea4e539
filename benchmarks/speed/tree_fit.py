"""What one refit of the best-first tree costs on the rows a bounded RCFR arm fits (`BestFirstTree.fit`).

    python -m benchmarks.speed.tree_fit                      # 12,000 rows of Bluff's bid features
    python -m benchmarks.speed.tree_fit --rows 3000 48000 --leaves 256 12000

The rows are Liar's Dice (1,1)'s sequence rows under the ``liars_dice`` encoder (69 columns; the Bluff(2,2) arms
fit the same encoder's 81), drawn without replacement (seed 0, repeated when more are asked than the game has), with standard
normal targets (seed 1). The column ranks (or sort orders) are computed once per row matrix and kept (`_prepare`), as between
refits on one reservoir, so the table gives the first fit (sorting included) and the median of `--repeats`
refits with new targets. The first call of each kernel (compiling or loading numba's cache) is not timed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rcfr
from rcfr.features import feature_matrix
from rcfr.regressors import BestFirstTree


def rows(n: int) -> np.ndarray:
    matrix = feature_matrix(rcfr.load_game("liars_dice"), "liars_dice").matrix
    pick = np.random.default_rng(0).choice(len(matrix), n, replace=n > len(matrix))
    out = np.ascontiguousarray(matrix[pick], np.float64)
    out.flags.writeable = False  # read-only: the tree keeps its sort orders between fits, as on a reservoir
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[12000])
    parser.add_argument("--leaves", type=int, nargs="+", default=[256, 4096, 12000])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    BestFirstTree(max_leaves=4).fit(np.eye(3), np.arange(3.0))  # compile (or load) the kernels first
    targets = np.random.default_rng(1)
    print("| rows | columns | leaves asked | leaves grown | first fit ms | refit ms (median) |")
    print("|---|---|---|---|---|---|")
    for n in args.rows:
        x = rows(n)
        for leaves in args.leaves:
            tree = BestFirstTree(max_leaves=leaves)
            start = time.perf_counter()
            tree.fit(x, targets.standard_normal(n))
            first = time.perf_counter() - start
            times = []
            for _ in range(args.repeats):
                y = targets.standard_normal(n)
                start = time.perf_counter()
                tree.fit(x, y)
                times.append(time.perf_counter() - start)
            print(f"| {n:,} | {x.shape[1]} | {leaves:,} | {tree.size():,} | {first * 1e3:.1f} | "
                  f"{np.median(times) * 1e3:.1f} |")


if __name__ == "__main__":
    main()
