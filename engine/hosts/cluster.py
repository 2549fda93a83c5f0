"""The batch on a Ray cluster (`layerpath batch --ray ADDRESS|auto`; the `cluster` extra).

The driver (where the command runs) keeps the journal and writes every result; each
photo goes to a Ray task with its bytes and its masks' bytes, and the task sends back the
result file's bytes and two thumbnails. So nodes need layerpath (the same version) and
their own model folder, not the driver's files. A task asks Ray for a GPU when the
cluster has one and the settings do not pin the CPU: model tools then run on it.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Sequence
from typing import Any

from layerpath.engine.hosts.batch import (
    BatchItem,
    BatchSpec,
    PhotoOutcome,
    Runner,
    hand_out,
    process,
)
from layerpath.errors import BadInput, shown

log = logging.getLogger(__name__)


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise BadInput(
            "--ray needs Ray: pip install 'layerpath[cluster]' (on this machine and on "
            "every machine of the cluster)."
        ) from exc
    return ray


def connect(address: str, cpus: int | None = None) -> Any:
    """Join the cluster at `address` ('auto': the one `ray start --head` started on this
    machine, else a new local one with `cpus` CPUs, this machine's when None)."""
    ray = _ray()
    if ray.is_initialized():
        return ray
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if address == "auto":
        try:
            ray.init(address="auto", **options)
        except ConnectionError:
            cpus = cpus or os.cpu_count() or 1
            log.info("no Ray cluster is running here; starting a local one (%d CPUs)", cpus)
            ray.init(num_cpus=cpus, **options)
    else:
        if not _answers(address):  # (Ray itself retries a dead address for minutes)
            raise BadInput(
                f"No Ray cluster answers at {shown(address, 120)}: start one with `ray start "
                "--head` (see docs/batch.md, Studio scale) or use --ray auto."
            )
        try:
            ray.init(address=address, **options)
        except ConnectionError as exc:
            raise BadInput(
                f"No Ray cluster answers at {address}: start one with `ray start --head` "
                "(see docs/batch.md, Studio scale) or use --ray auto."
            ) from exc
    return ray


#: how long a cluster's head has to answer before the batch says it does not
CONNECT_S = 5.0


def _answers(address: str, wait_s: float = CONNECT_S) -> bool:
    """Whether something listens at a Ray address ('host:port', 'ray://host:port'):
    one plain connection, given `wait_s` seconds."""
    where = address.split("://", 1)[-1].rstrip("/")
    host, _, port = where.rpartition(":")
    if not host or not port.isdigit():
        raise BadInput(
            f"--ray wants 'auto' or the cluster head's HOST:PORT (e.g. 10.0.0.5:6379), "
            f"not '{shown(address, 120)}'."
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=wait_s):
            return True
    except (OSError, ValueError):
        return False


def _payload(item: BatchItem) -> dict[str, bytes]:
    data = {"source": item.source.read_bytes()}
    for name, path in item.masks.items():
        data[f"mask:{name}"] = path.read_bytes()
    return data


def ray_runner(address: str, jobs: int | None = None) -> Runner:
    """A batch runner handing each photo to a Ray task: `jobs` photos at once, or as many
    as the cluster has CPUs (the files are read when a task is handed out, not all at
    once)."""

    def run(
        todo: Sequence[BatchItem],
        spec: BatchSpec,
        started: Callable[[BatchItem], None],
        finished: Callable[[PhotoOutcome], None],
        cancel: Callable[[], bool],
    ) -> None:
        ray = connect(address, jobs)
        resources = ray.cluster_resources()
        gpus = 1 if resources.get("GPU", 0) >= 1 and spec.settings.device != "cpu" else 0
        task = ray.remote(num_cpus=1, num_gpus=gpus, max_retries=1)(process)
        width = jobs or max(1, int(resources.get("CPU", 1)))
        hand_out(
            todo,
            width,
            lambda item: task.remote(item, spec, _payload(item)),
            lambda refs: ray.wait(refs, num_returns=1, timeout=0.5)[0],
            ray.get,
            "its Ray task failed",  # (its node went away)
            started,
            finished,
            cancel,
        )

    return run
