import os
import time

import pytest
from hypothesis import HealthCheck, settings

import rcfr

# Green under load: no hypothesis example may fail for taking long (deadline, too_slow) on a busy machine.
settings.register_profile("rcfr", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("rcfr")

# Tests never touch the user's cache: each test run compiles into its own temporary cache, which the
# xdist workers of one run share (writes are atomic), so each game is compiled about once per run.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _warm_driver():
    from rcfr.solvers.mccfr import ExternalSamplingMCCFR

    ExternalSamplingMCCFR(rcfr.load_game("kuhn"), seed=0).run(1)


def _warm_rules_and_trees():
    """Kernels that need no compiled game: the rules path's evaluation and counting walks, best-first trees, and
    (while the other worker still compiles the driver) the approximate evaluation's walk and Bluff's evaluation."""
    import numpy as np

    import rcfr.evaluation.approx_walks
    import rcfr.evaluation.bluff
    from rcfr.evaluation.rules import exploitability
    from rcfr.policy.rules import CodePolicy
    from rcfr.regressors import make_regressor
    from rcfr.sources.sizes import count_sizes

    rules = rcfr.make_rules("kuhn")
    exploitability(rules, CodePolicy(rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0)),
                   default="uniform")
    count_sizes(rules)
    x = np.linspace(0.0, 1.0, 40).reshape(20, 2)
    make_regressor({"name": "best_first", "max_leaves": 4}).fit(x, x[:, 0])
    rcfr.evaluation.approx_walks.walk_samples.dispatcher  # compiled on first use (rcfr.numba_lazy): now
    rcfr.evaluation.bluff._walk.dispatcher


def _warm_model_driver(by_rules):
    """The driver with compiled models in the walk (``profile="model"``), on the tree or on the rules: a minute
    or more each, cold, and only the slow set's runs use them."""
    from rcfr.solvers import SampledRCFR, SampledRCFRPlus

    game = rcfr.load_game("kuhn", compiled=not by_rules)
    for solver in (SampledRCFR, SampledRCFRPlus):
        solver(game, features_on_demand=True, features="poker", traversals=2, refit_every=2, capacity=10**4,
               regressor={"name": "best_first", "max_leaves": 8}, profile="model", average="mixture").run(2)


#: Kernels that take up to a minute of CPU each to compile from a cold numba cache (the game compiler and
#: the sampling driver first): split among the xdist workers so that no two compile the same one at the same
#: time (warm, each loads in about a second). The slow set (``-m slow``) adds the model drivers.
WARM_UPS = (_warm_driver, _warm_rules_and_trees)
SLOW_WARM_UPS = (lambda: _warm_model_driver(False), lambda: _warm_model_driver(True))


#: The slow set's longest tests (minutes each, measured on the 2-core machine), dealt out first so that the workers
#: share them and finish together instead of one running a long test alone at the end.
LONGEST_FIRST = ("test_lean_shards.py::test_ray_workers", "test_tuning.py::", "test_distributed_sampled.py::test_ray",
                 "test_numba_cache.py::test_an_edit_to_a_walk", "test_experiments_multirun.py::test_the_readme_main_command",
                 "test_bluff_public_cfr.py::test_bluff_21", "test_row_targets.py::test_a_window", "test_wheel.py::",
                 "test_one_evaluation.py::", "test_inwalk_models.py::", "test_model_state.py::")


@pytest.hookimpl(trylast=True)  # after `-m` deselected the other set: the shares are of the tests that run
def pytest_collection_modifyitems(config, items):
    """Each xdist worker starts on a contiguous share of the collection (work stealing takes from the shares' ends), so
    the longest tests go round-robin to the heads of the shares; the rest keep their order."""
    rank = lambda item: next((k for k, key in enumerate(LONGEST_FIRST) if key in item.nodeid), None)  # noqa: E731
    longest = sorted((item for item in items if rank(item) is not None), key=rank)
    rest = [item for item in items if rank(item) is None]
    workers = max(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")), 1)
    shares, left = [], len(items)
    for k in range(workers):  # the sizes the scheduler sends: what is left over the workers still to serve
        shares.append(left // (workers - k))
        left -= shares[-1]
    heads = [longest[k::workers] for k in range(workers)]
    ordered, taken = [], 0
    for k, size in enumerate(shares):
        fill = max(size - len(heads[k]), 0)
        ordered += heads[k] + rest[taken:taken + fill]
        taken += fill
    items[:] = ordered + rest[taken:]


@pytest.fixture(autouse=True, scope="session")
def _compiled_kernels(request, tmp_path_factory, _private_cache):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker or len(request.session.items) < 200:  # a few tests may need neither entry point
        return
    index, count = int(worker.removeprefix("gw")), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    warm_ups = WARM_UPS + (SLOW_WARM_UPS if request.config.option.markexpr == "slow" else ())
    for warm in warm_ups[index::count]:
        warm()
    # then wait (at most ten minutes) until every worker has warmed its share: the others load them from disk
    shared = tmp_path_factory.getbasetemp().parent
    (shared / f"warm-{worker}").touch()
    warming = [shared / f"warm-gw{i}" for i in range(min(count, len(WARM_UPS)))]
    deadline = time.monotonic() + 600
    while not all(path.exists() for path in warming) and time.monotonic() < deadline:
        time.sleep(0.2)


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    old = os.environ.get("RCFR_CACHE")
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "rcfr-cache"  # workers: the run's base
    shared.mkdir(exist_ok=True)
    os.environ["RCFR_CACHE"] = str(shared)
    yield
    if old is None:
        os.environ.pop("RCFR_CACHE", None)
    else:
        os.environ["RCFR_CACHE"] = old


@pytest.fixture(scope="session")
def kuhn():
    return rcfr.load_game("kuhn")


@pytest.fixture(scope="session")
def leduc():
    """Leduc hold'em with suits (936 information sets)."""
    return rcfr.load_game("leduc")


@pytest.fixture(scope="session")
def leduc_ranks():
    """Rank-only Leduc (288 information sets, 672 sequences), the size RCFR results refer to."""
    return rcfr.load_game("leduc", merge_suits=True)


@pytest.fixture
def no_enumeration(monkeypatch):
    """Makes any enumeration of a game an error: a request known to be too large must fail from its estimate."""
    from rcfr import compiler, tree

    def no_work(*args):
        raise AssertionError("enumerated a game known to be too large")

    monkeypatch.setattr(compiler, "count_fast", no_work)
    monkeypatch.setattr(tree.enumeration, "_enumerate", no_work)


@pytest.fixture(scope="session")
def local_ray():
    """A local Ray of 2 CPUs for the distributed tests, started once per worker (skipped without Ray)."""
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'rcfr[ray]'")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
