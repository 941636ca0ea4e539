"""The package as a user installs it: a built wheel in a fresh virtual environment, the source tree out of
reach, the kit run from a temporary directory (issue 33). The venv sees this interpreter's site-packages for
the dependencies (no network at test time), but rcfr itself must come from the wheel."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _run(args, cwd, timeout=900, **env):
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RCFR_CACHE")}
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**clean, **env})
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out, source = tmp_path_factory.mktemp("dist"), tmp_path_factory.mktemp("source") / "rcfr"
    # built from a copy: setuptools leaves build/ in the tree it builds, whose stale files a later wheel would carry
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", "outputs",
                                                                 ".hypothesis", ".pytest_cache"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(out),
          str(source)], cwd=tmp_path_factory.getbasetemp())
    (built,) = out.glob("rcfr-*.whl")
    return built


def test_the_wheel_claims_only_the_rcfr_name_and_ships_the_configs(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"rcfr"}
    assert "rcfr/configs/config.yaml" in names and "rcfr/configs/experiment/leduc_quick.yaml" in names
    assert "rcfr/configs/search/config.yaml" in names
    assert "rcfr/features/encoders.py" in names and "rcfr/experiments/run.py" in names


def test_the_installed_kit_runs_a_preset_from_any_directory(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], cwd=tmp_path)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    _run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)], cwd=tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = _run([str(python), "-c", "import rcfr, rcfr.features, rcfr.experiments, importlib.util;"
                  "print(rcfr.__version__, rcfr.__file__, rcfr.features.__file__,"
                  " importlib.util.find_spec('features') is None)"], cwd=work).split()
    assert where[1].startswith(str(venv)) and where[2].startswith(str(venv)), where
    assert where[3] == "True", "the wheel must not install a top-level `features` package"
    sweep = tmp_path / "sweep"
    _run([str(bin_dir / "rcfr-run"), "+experiment=lanctot_fig53_quick", f"hydra.sweep.dir={sweep}",
          "hydra.launcher.n_jobs=1"], cwd=work, RCFR_CACHE=str(tmp_path / "cache"))
    assert (sweep / "curves.md").is_file() and (sweep / "results.csv").is_file()
    mine = tmp_path / "my_configs" / "game"  # a user's own group option, on Hydra's search path
    mine.mkdir(parents=True)
    (mine / "my_kuhn.yaml").write_text("name: kuhn\nparams: {}\n")
    _run([str(bin_dir / "rcfr-run"), "--config-dir", str(mine.parent), "game=my_kuhn", "solver=cfr+",
          "run.iterations=5", f"hydra.run.dir={tmp_path / 'mine'}"], cwd=work, RCFR_CACHE=str(tmp_path / "cache"))
    assert (tmp_path / "mine" / "summary.json").is_file()
    printed = _run([str(bin_dir / "rcfr"), "--game", "kuhn", "--solver", "cfr+", "--iterations", "10"], cwd=work)
    assert "exploitability" in printed
