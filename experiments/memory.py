"""Resident memory of this process, for the run summaries (Linux /proc; None elsewhere).

The peak (``VmHWM``) is reset by writing "5" to ``/proc/self/clear_refs``: a joblib worker runs many
jobs, and each job's peak must be its own. File-backed pages count once touched, so the pages of a
memory-mapped compiled game that a run reads are part of its resident set; ``RssAnon`` (the process's
private memory: the solver's arrays, the model, Python) leaves them out.
"""

from __future__ import annotations

from pathlib import Path

_STATUS = Path("/proc/self/status")
#: a run's memory in its summary.json (MiB, counted from the end of the warm-up): ``peak_rss_mib`` the
#: process's peak resident set over the run, evaluations included; ``solve_peak_rss_mib`` the same with
#: evaluations left out (the peak is reset after each one, so the pages an evaluation touched of a
#: memory-mapped game stay counted); ``anon_rss_mib`` the largest private resident memory seen just before
#: an evaluation (the solver's arrays, model and Python, without file-backed pages). None off Linux.
MEMORY = ("peak_rss_mib", "solve_peak_rss_mib", "anon_rss_mib")


def reset_peak() -> bool:
    """Set the peak resident set to the current one; False where that is not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _field_mib(name: str) -> float | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return None


def peak_mib() -> float | None:
    """Peak resident set (MiB) since the last `reset_peak`."""
    return _field_mib("VmHWM")


def anon_mib() -> float | None:
    """Resident private (anonymous) memory now (MiB): the resident set without file-backed pages."""
    return _field_mib("RssAnon")
