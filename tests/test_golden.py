"""Every solver's seeded average policy equals the frozen one of `tests/data/golden.npz` (see tests/golden.py)."""

import numpy as np
import pytest

from tests.golden import CASES, PATH, run_case


@pytest.fixture(scope="module")
def golden():
    with np.load(PATH) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_seeded_results_are_unchanged(case, golden):
    key, *spec = case
    np.testing.assert_array_equal(run_case(*spec), golden[key], err_msg=f"{key}: results changed")


def test_every_case_is_frozen(golden):
    assert sorted(golden) == sorted(c[0] for c in CASES)
