"""`maxlag --format prometheus` and `diagnose --format prometheus` on a real stalled consumer: the
maxlag tests' reproducer JVM (the old consumer's fetcher and streams over bounded queues) read by
PID, with its checker lag from the real ZooKeeper and broker."""

from __future__ import annotations

from kafkadiag.exitcodes import ExitCode
from tests.infra.cli import run
from tests.maxlag.conftest import jmx_client_cache, reproducer_classes, start  # noqa: F401 (fixtures)
from tests.maxlag.scenario import deploy
from tests.maxlag.test_maxlag_cli import SETTINGS, drive_to_stall
from tests.prometheus.promtool import promtool


def _lint(exposition: str) -> None:
    result = promtool("check", "metrics", stdin=exposition)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_a_stalled_consumer_in_both_forms(cluster, start) -> None:  # noqa: F811 (fixture)
    # GIVEN a consumer whose stream 0 stopped draining: its queue full, the fetcher blocked in put()
    deployment = deploy(cluster, start, SETTINGS, prefix="exported")
    drive_to_stall(deployment)
    options = ["--pid", str(deployment.pid), *deployment.cli_args(), "--format", "prometheus"]
    # WHEN maxlag exports it
    code, out, err = run(["maxlag", *options])
    # THEN the verdict is one series labelled streams-not-draining, and the full queue is 2 of 2
    assert code == ExitCode.FINDINGS, out + err
    _lint(out)
    cluster_label = f'cluster="{cluster.zookeeper}"'
    group = deployment.group.group
    verdicts = [line for line in out.splitlines() if line.startswith("kafkadiag_fetcher_verdict{")]
    assert len(verdicts) == 1 and 'verdict="streams-not-draining"} 1' in verdicts[0], verdicts
    assert cluster_label in verdicts[0] and f'group="{group}"' in verdicts[0], verdicts
    queue = f'topic="{deployment.topic}",thread="0"}}'
    assert any(
        line.startswith("kafkadiag_stream_queue_chunks{") and line.endswith(f"{queue} 2")
        for line in out.splitlines()
    ), out
    assert any(
        line.startswith("kafkadiag_stream_queue_capacity_chunks{") and line.endswith(f"{queue} 2")
        for line in out.splitlines()
    ), out
    assert (
        f'kafkadiag_partition_fetcher_gap_records{{{cluster_label},group="{group}",source="zookeeper",topic="{deployment.topic}",partition="0"}}'
        in out
    )
    # WHEN diagnose exports it
    code, out, err = run(["diagnose", *options])
    # THEN the verdict is stalled, KD701 is counted, and the lag it read is there too
    assert code == ExitCode.FINDINGS, out + err
    _lint(out)
    assert f'kafkadiag_diagnosis_verdict{{{cluster_label},verdict="stalled"}} 1' in out, out
    assert f'kafkadiag_diagnosis_findings{{{cluster_label},code="KD701",severity="error"}} 1' in out, out
    assert f'kafkadiag_group_lag_records{{{cluster_label},group="{group}",source="zookeeper"}}' in out, out
    assert f'kafkadiag_diagnosis_source_up{{{cluster_label},kind="metrics"' in out, out
