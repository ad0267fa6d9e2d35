"""Real processes for the scrape tests: `kafkadiag lag --serve` and a Prometheus server (Debian's
package), each on 127.0.0.1 on a free port, in its own working directory, stopped by PID."""

from __future__ import annotations

import json
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkadiag.sandbox.servers import ServerProcess, free_port, port_is_open, spawn, starting
from tests.prometheus.promtool import tool


def _wait_for_port(server: ServerProcess, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"{server.name} exited {server.process.returncode}:\n{server.log_tail()}")
        if port_is_open(server.port):
            return
        time.sleep(0.1)
    raise AssertionError(f"{server.name} not listening within {timeout_s}s:\n{server.log_tail()}")


def start_exporter(workdir: Path, *options: str) -> ServerProcess:
    """`kafkadiag lag OPTIONS --serve 127.0.0.1:PORT`, listening."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    argv = [sys.executable, "-m", "kafkadiag", "lag", *options, "--serve", f"127.0.0.1:{port}"]
    with starting(lambda: spawn("kafkadiag-serve", argv, workdir, port)) as server:
        _wait_for_port(server, 30.0)
    return server


def http_get(url: str, timeout_s: float = 30.0) -> tuple[int, str, str]:
    """(status, content type, body)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


class Prometheus:
    def __init__(self, server: ServerProcess) -> None:
        self.server = server

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        status, _, body = http_get(f"http://{self.server.address}/api/v1/{path}?{query}")
        document = json.loads(body)
        assert status == 200 and document["status"] == "success", body
        return document["data"]

    def query(self, expression: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.api("query", query=expression)["result"]
        return result

    def wait_for(
        self, expression: str, accept: Callable[[list[dict[str, Any]]], bool] = bool, timeout_s: float = 60.0
    ) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        result: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            result = self.query(expression)
            if accept(result):
                return result
            time.sleep(0.5)
        targets = self.api("targets")
        raise AssertionError(f"{expression}: {result} after {timeout_s}s; targets: {targets}")

    def stop(self) -> None:
        self.server.stop()


def start_prometheus(workdir: Path, target: str, rule_files: tuple[Path, ...] = ()) -> Prometheus:
    """A Prometheus server scraping `target` every second, its storage in workdir."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = workdir / "prometheus.yml"
    rules = "".join(f"\n  - {json.dumps(str(path))}" for path in rule_files)
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        + (f"rule_files:{rules}\n" if rules else "")
        + f"scrape_configs:\n  - job_name: kafkadiag\n    static_configs:\n      - targets: ['{target}']\n"
    )
    argv = [
        tool("prometheus"),
        f"--config.file={config}",
        f"--storage.tsdb.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    with starting(lambda: spawn("prometheus", argv, workdir, port, env={"PATH": "/usr/bin:/bin"})) as server:
        _wait_for_port(server, 60.0)
        _wait_until_ready(server, 60.0)
        prometheus = Prometheus(server)
        prometheus.wait_for("up", timeout_s=60.0)
    return prometheus


def _wait_until_ready(server: ServerProcess, timeout_s: float) -> None:
    """Listening comes before ready: until its storage is open, the API answers 503."""
    deadline = time.monotonic() + timeout_s
    while http_get(f"http://{server.address}/-/ready")[0] != 200:
        if time.monotonic() > deadline or server.process.poll() is not None:
            raise AssertionError(f"Prometheus not ready within {timeout_s}s:\n{server.log_tail()}")
        time.sleep(0.2)
