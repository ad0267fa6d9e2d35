"""`maxlag --prometheus FILE` over an exposition with no consumer fetcher bean (the JMX exporter of
a JVM that runs no connector): the absent verdict in words, with no bound computed for nothing,
and the client's notes apart from the source's."""

from __future__ import annotations

from pathlib import Path

from kafkadiag.exitcodes import ExitCode
from tests.infra.cli import run

# What the JMX exporter's default export serves for a JVM with no Kafka consumer in it.
JVM_ONLY = """\
# HELP jvm_threads_current Current thread count of a JVM
# TYPE jvm_threads_current gauge
jvm_threads_current 23.0
# HELP jvm_memory_bytes_used Used bytes of a given JVM memory area.
# TYPE jvm_memory_bytes_used gauge
jvm_memory_bytes_used{area="heap",} 4.1943E7
"""


def test_no_fetcher_beans_are_said_without_a_bound_or_a_repeated_heading(tmp_path: Path) -> None:
    exposition = tmp_path / "metrics.txt"
    exposition.write_text(JVM_ONLY)
    code, out, err = run(["maxlag", "--prometheus", str(exposition)])
    assert code == ExitCode.FINDINGS, (out, err)
    assert out.splitlines()[0].endswith(f"metrics from {exposition}, checker lag not read"), out
    assert "from not read" not in out and "Bound on what" not in out, out
    assert "KD705" in out and "no consumer fetcher MBean found" in out, out
    headings = [line for line in out.splitlines() if line.startswith("Notes")]
    assert len(headings) == len(set(headings)) == 2, headings
    assert f"Notes on the metrics read from {exposition}" in headings, headings
