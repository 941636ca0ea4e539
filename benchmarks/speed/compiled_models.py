"""What a prediction costs through a regressor's own `predict` and through its compiled model.

    python -m benchmarks.speed.compiled_models                 # rows 1 and 1,000, 6 features
    python -m benchmarks.speed.compiled_models --rows 1 4 64 --width 16

Each regressor is fit once on 2,000 random rows; then the fastest of `--repeats` timings of predicting
`rows` rows (µs per call) through ``model.predict`` and through ``compile_model(model).predict`` (the
checked Python entry) and the bare numba kernel `predict_rows` (what a compiled walk calls), with the
compiled model's bytes. A walk meets sets one at a time, so rows = 1-4 is its regime.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from rcfr.regressors import MLP, BestFirstTree, SklearnTree, lightgbm, linear
from rcfr.regressors.compiled import compile_model, predict_rows

MODELS = {
    "best_first 4,096 leaves": lambda: BestFirstTree(max_leaves=4096),
    "tree (scikit-learn) 256 leaves": lambda: SklearnTree(max_leaves=256, random_state=0),
    "lightgbm 20 x 8 leaves": lambda: lightgbm(random_state=0),
    "mlp 32 x 32": lambda: MLP(hidden=(32, 32), epochs=20, random_state=0),
    "linear": lambda: linear(),
}


def fastest(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 1000])
    parser.add_argument("--width", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, args.width))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, -1]
    print("| model | bytes | rows | predict µs | compiled predict µs | kernel µs | kernel speed-up |")
    print("|---|---|---|---|---|---|---|")
    for name, make in MODELS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = make().fit(X, y)
        compiled = compile_model(model)
        scratch = compiled.scratch()
        for rows in args.rows:
            Z = rng.normal(size=(rows, args.width))
            out = np.empty(rows)
            predict_rows(compiled, Z, out, scratch)  # compile before timing
            own = fastest(lambda m=model, Z=Z: m.predict(Z), args.repeats)
            checked = fastest(lambda c=compiled, Z=Z: c.predict(Z), args.repeats)
            kernel = fastest(lambda c=compiled, Z=Z, o=out, s=scratch: predict_rows(c, Z, o, s), args.repeats)
            print(f"| {name} | {compiled.nbytes:,} | {rows:,} | {own:,.1f} | {checked:,.1f} | {kernel:,.1f} | "
                  f"{own / kernel:,.0f}x |")


if __name__ == "__main__":
    main()
