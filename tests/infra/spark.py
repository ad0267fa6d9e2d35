"""A real Spark standalone cluster on 127.0.0.1: one master and one worker from the pyspark
installation (`spark-class`), on free ports, stopped by PID."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.infra.servers import ServerProcess, free_port, spawn


def spark_class() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-class")


def _environment() -> dict[str, str]:
    import pyspark

    return {
        **os.environ,
        "SPARK_HOME": str(Path(pyspark.__file__).parent),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_NO_DAEMONIZE": "1",
    }


def _wait_for_line(server: ServerProcess, text: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in server.log_tail(100_000):
            return
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited with {server.process.returncode}:\n{server.log_tail()}")
        time.sleep(0.2)
    raise RuntimeError(f"{server.name}: no {text!r} within {timeout_s}s:\n{server.log_tail()}")


@contextmanager
def standalone_cluster(workdir: Path) -> Iterator[str]:
    """Yield the master URL (spark://127.0.0.1:PORT) of a running master with one registered worker."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    master = spawn(
        "spark-master",
        [spark_class(), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
         "--webui-port", str(free_port())],
        workdir, port, env=_environment(),
    )  # fmt: skip
    worker = None
    try:
        _wait_for_line(master, "I have been elected leader")
        url = f"spark://127.0.0.1:{port}"
        worker_port = free_port()
        worker = spawn(
            "spark-worker",
            [spark_class(), "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
             "--port", str(worker_port), "--webui-port", str(free_port()), "--cores", "2", "--memory", "1g",
             "--work-dir", str(workdir / "work")],
            workdir, worker_port, env=_environment(),
        )  # fmt: skip
        _wait_for_line(worker, "Successfully registered with master")
        yield url
    finally:
        if worker is not None:
            worker.stop()
        master.stop()
