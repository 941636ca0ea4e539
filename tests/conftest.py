import os

import pytest

# Tests never touch the user's cache: each session compiles into its own temporary cache.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    old = os.environ.get("RCFR_CACHE")
    os.environ["RCFR_CACHE"] = str(tmp_path_factory.mktemp("rcfr-cache"))
    yield
    if old is None:
        os.environ.pop("RCFR_CACHE", None)
    else:
        os.environ["RCFR_CACHE"] = old
