"""Finding a sweep's runs and the jobs that left no results (failed, or never started)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from .memory import MEMORY

COLUMNS = ["label", "game", "solver", "regressor", "features", "abstraction", "seed", "status", "iteration",
           "representation_size", "representation_pct", "exploitability", "exploitability_mbb", "seconds",
           "cpu_seconds", "compile_seconds", *MEMORY, "nodes_touched", "state_bytes", "config_hash", "max_nodes_touched",
           "max_cpu_seconds", "measure",
           "measure_value", "run"]


def find_runs(directory: Path) -> list[Path]:
    return sorted((p.parent for p in directory.rglob("summary.json") if ".hydra" not in p.parts),
                  key=lambda p: [(0, int(s), "") if s.isdigit() else (1, 0, s) for s in p.relative_to(directory).parts])


def _read_metrics(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open() as f:
        return [{k: float(v) if v else None for k, v in row.items()} for row in csv.DictReader(f)]


def collect(directory: Path) -> tuple[list[dict], dict[str, list[dict]]]:
    rows, curves = [], {}
    for run in find_runs(directory):
        summary = json.loads((run / "summary.json").read_text())
        name = str(run.relative_to(directory)) or "."
        rows.append({**{k: summary.get(k) for k in COLUMNS}, "run": name})
        rows[-1]["measure"] = rows[-1]["measure"] or "exploitability"  # runs from before run.measure
        if rows[-1]["measure_value"] is None:
            rows[-1]["measure_value"] = summary.get(rows[-1]["measure"])
        curves[name] = _read_metrics(run / "metrics.csv")
    rows.sort(key=lambda r: (r["game"], r["label"], r["representation_size"] or 0, r["seed"] or 0))
    return rows, curves


def _job_overrides(job: Path) -> list[str]:
    from omegaconf import OmegaConf
    try:
        return [str(o) for o in OmegaConf.load(job / ".hydra" / "overrides.yaml")]
    except Exception:  # noqa: BLE001  (a damaged or half-written file: the job is listed all the same)
        return []


def _job_label(job: Path) -> tuple[str | None, str | None]:
    """(label, game) of a job that left no summary, read from the config Hydra saved for it."""
    from omegaconf import OmegaConf
    try:
        cfg = OmegaConf.to_container(OmegaConf.load(job / ".hydra" / "config.yaml"), resolve=False)
        game = cfg["game"]
        params = ", ".join(f"{k}={v!r}" for k, v in (game.get("params") or {}).items())
        if cfg.get("label"):
            return str(cfg["label"]), f"{game['name']}({params})"
        parts = [cfg["solver"]["name"]] + [cfg[c]["name"] for c in ("regressor", "features", "abstraction")
                                           if cfg.get(c, {}).get("name", "none") != "none"]
        return " ".join(parts), f"{game['name']}({params})"
    except Exception:  # noqa: BLE001
        return None, None


def expected_jobs(directory: Path) -> list[list[str]] | None:
    """The override lists of the jobs in the sweep's ``multirun.yaml``, expanded as Hydra's basic
    sweeper does; None without that file, for another sweeper, or for a sweep this cannot expand (glob)."""
    path = directory / "multirun.yaml"
    if not path.exists():
        return None
    from omegaconf import OmegaConf
    try:
        from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
        from hydra.core.override_parser.overrides_parser import OverridesParser

        config = OmegaConf.load(path)
        if "BasicSweeper" not in str(config.hydra.sweeper.get("_target_", "")):
            return None
        params = config.hydra.sweeper.get("params") or {}
        arguments = [f"{k}={v}" for k, v in params.items()] + list(config.hydra.overrides.task)
        batches = BasicSweeper.split_arguments(OverridesParser.create().parse_overrides(arguments), None)
        return [job for batch in batches for job in batch]
    except Exception:  # noqa: BLE001
        return None


def unfinished_jobs(directory: Path) -> list[dict]:
    """Jobs under `directory` with no results: "failed" ones (a job directory, no summary.json) and
    "missing" ones (named by multirun.yaml, no directory), each with its label, game and overrides."""
    out = []
    for hydra_dir in sorted(directory.rglob(".hydra")):
        job = hydra_dir.parent
        if (hydra_dir / "overrides.yaml").exists() and not (job / "summary.json").exists():
            label, game = _job_label(job)
            out.append({"run": str(job.relative_to(directory)) or ".", "status": "failed", "label": label,
                        "game": game, "overrides": " ".join(_job_overrides(job))})
    jobs = expected_jobs(directory)
    if jobs is not None:
        for number, overrides in enumerate(jobs):
            if not (directory / str(number)).exists():
                out.append({"run": str(number), "status": "missing", "label": None, "game": None,
                            "overrides": " ".join(overrides)})
    out.sort(key=lambda u: (int(u["run"]) if u["run"].isdigit() else 10 ** 9, u["run"]))
    return out
