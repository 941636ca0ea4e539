"""benchmarks/studies/sampler_study.py: the regressor names, the (solver, targets) pairs, the diagnostics' pooled
noise, and one tiny lean run whose diagnostics see an exact fit."""

from __future__ import annotations

import json

import numpy as np
import pytest


@pytest.fixture(scope="module")
def study():
    from benchmarks.studies import sampler_study  # the repository root is on the tests' path (pyproject)
    return sampler_study


def test_regressor_names(study):
    assert study.regressor_spec("best_first-717") == ("best_first", {"max_leaves": 717})
    assert study.regressor_spec("lightgbm-45x16") == ("lightgbm", {"n_estimators": 45, "num_leaves": 16,
                                                                    "min_child_samples": 5})
    assert study.regressor_spec("mlp-15") == ("mlp", {"hidden": [15]})
    assert study.regressor_spec("mlp-8x4") == ("mlp", {"hidden": [8, 4]})
    assert study.regressor_spec("mlp-15e200") == ("mlp", {"hidden": [15], "epochs": 200})
    assert study.regressor_spec("exact") == ("table", {})
    for bad in ("mlp-", "mlp-15e", "lightgbm-45", "forest-3", "best_first-x"):
        with pytest.raises(SystemExit, match="--regressors"):
            study.regressor_spec(bad)


def test_pairs_replace_the_product(study):
    got = list(study.arms(["sampled-rcfr"], ["external"], ["stored"], ["best_first-4", "mlp-2"], (0, ["recent"]),
                          pairs=[("sampled-rcfr+", "stored"), ("sampled-rcfr", "reservoir")]))
    learned = [(a["solver"], a["targets"], a["regressor"]) for a in got if a["regressor"] != "table"]
    assert learned == [("sampled-rcfr+", "stored", "best_first-4"), ("sampled-rcfr+", "stored", "mlp-2"),
                       ("sampled-rcfr", "reservoir", "best_first-4"), ("sampled-rcfr", "reservoir", "mlp-2")]


def test_pooled_noise_is_the_variance_of_each_mean(study):
    """Equal weights: one pooled sample variance (unbiased), over each sequence's count, averaged by count;
    a sequence sampled once counts with the pooled variance, not zero."""
    sequence = np.array([0, 0, 0, 0, 5, 5, 7])
    regret = np.array([1.0, 3.0, 1.0, 3.0, 2.0, 2.0, 9.0])
    got = study._pooled_noise(sequence, regret, np.ones(7, np.int64), 0.0)
    pooled = 4.0 / (3 + 1)  # squares about each mean over the degrees of freedom; the single sample has none
    assert got == pytest.approx((4 * pooled / 4 + 2 * pooled / 2 + 1 * pooled / 1) / 7)
    assert np.isnan(study._pooled_noise(np.array([1, 2]), np.array([1.0, 2.0]), np.ones(2, np.int64), 0.0))


def test_a_tiny_lean_run_writes_its_diagnostics(study, tmp_path):
    """With the exact table as regressor a fit has no error on its training set; every refit logs a line,
    and the run's row carries the schedule and the byte counts."""
    import rcfr
    game = rcfr.load_game("goofspiel", cards=3)
    arm = dict(solver="sampled-rcfr", sampler="external", targets="reservoir", regressor="exact", capacity=0,
               selection="recent")
    with open(tmp_path / "fits.jsonl", "w") as log:
        row = study.run(game, "goofspiel(cards=3)", "goofspiel", arm, 0, 3000, (2, 5), log)
    fits = [json.loads(line) for line in open(tmp_path / "fits.jsonl")]
    assert row["traversals"] == 2 and row["refit_every"] == 5 and row["solver_bytes"] > 0
    assert len(fits) == 2 * (row["iterations"] // 5) > 0
    assert all(f["fit_mse"] < 1e-20 and f["sign_disagree"] == 0 for f in fits)
    assert all(f["noise_var"] >= 0 and f["target_var"] >= 0 for f in fits)
    assert any(f["noise_var"] > 0 for f in fits)


def test_paired_differences_use_the_shared_seeds(study):
    rows = [dict(game="g", method=m, seed=s, exploitability=e) for m, s, e in
            [("base", 0, 0.5), ("base", 1, 0.7), ("other", 0, 0.4), ("other", 1, 0.6), ("other", 2, 9.0)]]
    line = [r for r in study.paired(rows, "base").splitlines() if "| other |" in r][0]
    assert "| 2 | -0.1000 | ±0.0000 |" in line
