"""report.html read as an SRE reads it: in a real browser, after a real batch run.

GIVEN captured dumps with findings and a lag history recorded from real groups on the real
broker (two topics, with a pause in the recording); WHEN `kafkadiag batch` runs as its own
process (a real local Spark) under umask 027 and Debian's chromium renders report.html headless;
THEN the page shows per group a chart with a time axis and a lag axis in records, a line per
topic broken at the pause, the status strip with its legend, and every finding's message,
evidence and remedy in the DOM; the screenshot is kept under the test's directory. Spark's own
chatter went to spark.log in --out, not the terminal, and --out has the umask's permissions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.infra import workload
from tests.infra.cli import run
from tests.infra.servers import ServerProcess
from tests.infra.workload import Cluster

# What Spark and its JVM print when they start (Spark 4, JDK 17+): never on the user's terminal.
SPARK_CHATTER = ("WARNING: Using incubator modules", "Setting default log level", "setLogLevel(newLevel)")
PAUSE_S = 4.0  # ten times the step between the other recordings: a gap


def record(bootstrap: str, groups: list[str], directory: Path) -> None:
    code, _, err = run(
        ["lag", "--bootstrap-server", bootstrap, *(a for g in groups for a in ("--group", g)),
         "--record", str(directory)]
    )  # fmt: skip
    assert code == ExitCode.OK, err


@pytest.fixture(scope="module")
def history(
    zookeeper: ServerProcess, broker: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Seven recordings of two groups over two topics, with a pause of PAUSE_S after the fourth."""
    directory = tmp_path_factory.mktemp("history") / "record"
    cluster = Cluster(zookeeper.address, broker.address)
    try:
        orders, payments = cluster.topic(1, {0: 50}), cluster.topic(2, {0: 30, 1: 30})
        slow, stuck = workload.unique("slow-consumer"), workload.unique("stuck-consumer")
        for step in range(7):
            if step == 4:
                time.sleep(PAUSE_S)
            workload.produce(cluster.bootstrap, orders, {0: 4})
            workload.produce(cluster.bootstrap, payments, {0: 2, 1: 2})
            workload.commit_offsets_without_joining(
                cluster.bootstrap,
                slow,
                {(orders, 0): 10 + 3 * step, (payments, 0): 5 + step, (payments, 1): 5},
            )
            workload.commit_offsets_without_joining(cluster.bootstrap, stuck, {(orders, 0): 3})
            record(cluster.bootstrap, [slow, stuck], directory)
            time.sleep(0.3)
    finally:
        cluster.close()
    return directory


@pytest.fixture(scope="module")
def batch(history: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`kafkadiag batch` as its own process, so that what reaches its terminal is what the JVM
    and Spark print, not only what Python prints."""
    out = tmp_path_factory.mktemp("batch") / "out"
    inputs = [str(CAPTURED / "deadlock"), str(CAPTURED / "real-old-consumer-stall-0.8.2.2"), str(history)]
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "batch", *inputs, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        # Only Spark's output is judged here (batch's progress: tests/cli/test_progress_diagnose_batch.py).
        env={**os.environ, "KAFKADIAG_PROGRESS": "never"},
        preexec_fn=lambda: os.umask(0o027),
    )
    assert done.returncode == ExitCode.FINDINGS, done.stderr[-3000:]
    return {"out": out, "stdout": done.stdout, "stderr": done.stderr}


def test_spark_chatter_goes_to_a_log_in_out_not_the_terminal(batch: dict[str, Any]) -> None:
    for line in SPARK_CHATTER:
        assert line not in batch["stderr"] and line not in batch["stdout"], batch["stderr"]
    assert batch["stderr"].strip() == "", batch["stderr"]
    log = (batch["out"] / "spark.log").read_text()
    assert any(line in log for line in SPARK_CHATTER), log


def test_out_and_its_files_have_the_permissions_the_umask_gives(batch: dict[str, Any]) -> None:
    out = batch["out"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o750  # mkdtemp alone would give 0700
    for name in ("report.html", "summary.json", "findings.jsonl", "spark.log"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o640, name


class Page(HTMLParser):
    """The DOM as chromium serialised it: texts by the class of the element they are in, and
    every SVG shape with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.texts: dict[str, list[str]] = {}
        self.shapes: list[tuple[str, dict[str, str]]] = []
        self.fetches: list[tuple[str, dict[str, str]]] = []  # what would load from elsewhere

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag in ("script", "link", "img", "iframe", "object", "embed") or {"src", "href"} & set(attributes):
            self.fetches.append((tag, attributes))
        if tag in ("polyline", "rect", "circle", "line"):
            self.shapes.append((tag, attributes))
        else:
            self.open.append(attributes.get("class", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("polyline", "rect", "circle", "line") and self.open:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        for name in {name for classes in self.open for name in classes.split()}:
            self.texts.setdefault(name, []).append(data)

    def text(self, name: str) -> str:
        return "".join(self.texts.get(name, []))


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("chromium")
    assert binary, "Debian's chromium is needed to render report.html (apt-get install chromium; see .ci/run)"
    # chromium refuses to run as root inside its sandbox; the page is our own file, read offline.
    sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []
    command = [binary, "--headless", "--disable-gpu", *sandbox, "--hide-scrollbars", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def rendered(batch: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Page:
    report = batch["out"] / "report.html"
    screenshot = tmp_path_factory.mktemp("browser") / "report.png"
    done = chromium(f"--screenshot={screenshot}", "--window-size=1280,2400", report.as_uri())
    assert screenshot.is_file() and screenshot.stat().st_size > 20_000, done.stderr[-2000:]
    print(f"report.html as chromium rendered it: {screenshot}")
    dom = chromium("--dump-dom", report.as_uri())
    assert "</html>" in dom.stdout, dom.stderr[-2000:]
    page = Page()
    page.feed(dom.stdout)
    return page


def test_the_page_is_one_file_with_nothing_to_fetch_and_no_script(rendered: Page) -> None:
    assert rendered.fetches == []
    assert len(rendered.shapes) > 50  # the check above looked at a page that has its charts


def test_each_group_has_a_chart_with_axes_units_and_a_line_per_topic(rendered: Page) -> None:
    assert rendered.text("lag-axis").count("lag (records)") == 2  # the two groups
    assert rendered.text("time-axis").count("time (UTC)") == 2
    ticks = re.findall(r"\d\d:\d\d:\d\d", rendered.text("time-axis"))
    assert len(ticks) >= 4, rendered.text("time-axis")
    # the slow group reads two topics: a line for each and their sum
    legend = rendered.text("series-legend")
    assert legend.count("topic ") == 3 and "all topics" in legend, legend


def test_the_pause_in_the_recording_is_a_gap_not_a_line(rendered: Page) -> None:
    gaps = [attrs for tag, attrs in rendered.shapes if tag == "rect" and attrs.get("class") == "gap"]
    assert len(gaps) == 2, gaps  # one per group
    assert "no recording for" in rendered.text("gap-label")
    spans = [(float(g["x"]), float(g["x"]) + float(g["width"])) for g in gaps]
    lines = [attrs["points"] for tag, attrs in rendered.shapes if tag == "polyline"]
    assert len(lines) >= 2 * 4, lines  # every line is two segments
    for points in lines:
        xs = [float(pair.split(",")[0]) for pair in points.split()]
        for earlier, later in zip(xs, xs[1:]):
            assert not any(earlier <= left and later >= right for left, right in spans), points


def test_the_status_strip_has_a_legend(rendered: Page) -> None:
    strips = [attrs for tag, attrs in rendered.shapes if tag == "rect" and attrs.get("class") == "status"]
    assert len(strips) == 2 * 7, strips
    legend = rendered.text("status-legend")
    for status in ("OK", "WARN", "STALL", "STOP", "REWIND", "ERR"):
        assert status in legend, legend


def test_every_finding_is_in_the_page_with_its_evidence_and_remedy(
    rendered: Page, batch: dict[str, Any]
) -> None:
    findings = [json.loads(line) for line in (batch["out"] / "findings.jsonl").read_text().splitlines()]
    assert len(findings) > 20
    messages, evidence, remedies = (
        rendered.text("message"),
        rendered.text("evidence"),
        rendered.text("remedy"),
    )
    for finding in findings:
        assert finding["message"] in messages, finding["id"]
        for item in finding["evidence"]:
            assert item["text"] in evidence, (finding["id"], item)
        if finding["remedy"]:
            assert finding["remedy"] in remedies, finding["id"]


def test_processes_have_short_unique_labels(rendered: Page, batch: dict[str, Any]) -> None:
    findings = [json.loads(line) for line in (batch["out"] / "findings.jsonl").read_text().splitlines()]
    processes = {finding["process"] for finding in findings}
    labels = rendered.texts.get("process-label", [])
    assert len(set(labels)) == len(processes) == len(labels), labels
    assert all(len(label) < 45 for label in labels), labels
