"""Shards of one computation run in this process or on Ray workers, their results handed back in shard order.

Full-width walks (exact evaluation on either path, the full-game regret) split their work into *shards* whose
results the caller reduces in a fixed order, so the numbers depend on the shard count, never on how many
processes ran the shards or in which order they finished. `run_shards` is the only place that knows about Ray:
``workers=1`` runs the shards one after another here and never imports Ray; ``workers > 1`` starts a local Ray
on demand (``num_cpus=workers``, its workers not niced), or joins the cluster at ``ray_address`` (``"auto"``,
``"host:port"``, or ``"ray://host:port"`` for Ray Client), or uses a Ray this process has already initialized,
and keeps at most `workers` shards in flight. What crosses to a worker arrives as it left: Ray's object store
hands arrays over read-only, and numba types a read-only array apart from a writable one, so an array writable
here is copied writable there (a frozen one stays shared, zero-copy) and a worker loads the kernels this process
compiled instead of compiling its own. A shard whose worker dies is run again (``retries`` times); if it still fails the
call fails, naming the shard: a result is never reduced without every shard's share. docs/distributed.md.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from typing import Any

from .options import check_int

#: Seconds to wait for a Ray address's port to answer before refusing it.
CONNECT_TIMEOUT = 5.0


def check_workers(workers: Any) -> int:
    return check_int("workers", workers, 1)


def check_sharding(workers: Any = 1, shards: Any = None, ray_address: Any = None) -> dict[str, Any]:
    """The sharding options of a full-width computation, checked before any work: ``workers >= 1``, ``shards``
    (`workers` when None) >= 1, and a reachable `ray_address` when the shards go to Ray."""
    workers = check_workers(workers)
    shards = workers if shards is None else check_int("shards", shards, 1)
    if workers > 1:
        check_ray_address(ray_address)
    return {"workers": workers, "shards": shards, "ray_address": ray_address}


def check_ray_address(ray_address: Any) -> str | None:
    """None (a local Ray, started on demand), ``"auto"``, or ``"[ray://]host:port"`` whose port answers within
    `CONNECT_TIMEOUT` seconds (checked before Ray is asked, which may otherwise wait much longer)."""
    if ray_address is None or ray_address == "auto":
        return ray_address
    if not isinstance(ray_address, str) or ":" not in ray_address:
        raise ValueError(f"ray_address must be None (a local Ray), 'auto' or 'host:port' (or 'ray://host:port'), "
                         f"got {ray_address!r}")
    host, _, port = ray_address.removeprefix("ray://").rpartition(":")
    if not port.isdigit():
        raise ValueError(f"ray_address {ray_address!r}: the port {port!r} is not a number")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as why:
        raise ConnectionError(f"ray_address {ray_address!r} cannot be reached within {CONNECT_TIMEOUT:g} s ({why}); "
                              "start the head there with `ray start --head` or check the address") from None
    return ray_address


def _ray():
    try:
        import ray
    except ImportError:
        raise ImportError("workers > 1 runs shards on Ray, which is not installed: pip install 'rcfr[ray]' "
                          "(or pass workers=1)") from None
    return ray


def _connect(workers: int, ray_address: str | None):
    ray = _ray()
    if not ray.is_initialized():
        if ray_address is None:  # workers at the driver's priority (Ray's default niceness is 15)
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                     _system_config={"worker_niceness": 0})
        else:
            ray.init(address=ray_address, log_to_driver=False)
    return ray


def _pack(obj: Any) -> tuple[bytes, list, list[bool]]:
    """`obj` pickled with its arrays' buffers apart (Ray ships those zero-copy), each with its writeable flag."""
    import numpy as np
    from ray import cloudpickle

    buffers: list = []
    payload = cloudpickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    views = [b.raw() for b in buffers]
    return payload, [np.frombuffer(v, np.uint8) for v in views], [not v.readonly for v in views]


def _unpack(packed: tuple[bytes, list, list[bool]]) -> Any:
    """What `_pack` packed, its arrays' flags as they were: a buffer that was writable is copied (the store's is
    read-only), a frozen one is used where it lies."""
    import pickle

    payload, arrays, writeable = packed
    return pickle.loads(payload, buffers=[bytearray(a) if w else a for a, w in zip(arrays, writeable)])


def _call(function: Callable, common: Any, task: Any) -> Any:
    return _pack(function(_unpack(common), _unpack(task)))


def run_shards(function: Callable[[Any, Any], Any], common: Any, tasks: Sequence[Any], *, workers: int = 1,
               ray_address: str | None = None, retries: int = 2) -> list:
    """``[function(common, task) for task in tasks]``: here when ``workers == 1``, else on Ray with at most
    `workers` tasks at a time, `common` sent once per node (Ray's object store), each task to its worker.
    `function` must be importable by the workers (a module-level function of an installed module)."""
    workers = check_workers(workers)
    retries = check_int("retries", retries, 0)
    if workers == 1:
        return [function(common, task) for task in tasks]
    ray_address = check_ray_address(ray_address)
    ray = _connect(workers, ray_address)
    remote = ray.remote(num_cpus=1, max_retries=retries)(_call)
    shared = ray.put(_pack(common))
    pending: dict = {}
    results: list = [None] * len(tasks)
    following = 0
    while following < len(tasks) or pending:
        while following < len(tasks) and len(pending) < workers:
            pending[remote.remote(function, shared, _pack(tasks[following]))] = following
            following += 1
        done, _ = ray.wait(list(pending), num_returns=1)
        k = pending.pop(done[0])
        try:
            results[k] = _unpack(ray.get(done[0]))
        except ray.exceptions.RayTaskError as why:  # the shard's own error (a bad policy...): raise it as is
            for ref in pending:
                ray.cancel(ref, force=True)
            raise why.as_instanceof_cause() from None
        except ray.exceptions.RayError as why:  # its worker died (retries + 1 times), its node left, ...
            for ref in pending:
                ray.cancel(ref, force=True)
            raise RuntimeError(f"shard {k} of {len(tasks)} failed on Ray after {retries + 1} tries "
                               f"({type(why).__name__}); no result was reduced without it") from why
    return results
