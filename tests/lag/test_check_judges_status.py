"""`kafkadiag check` with no threshold judges Burrow's statuses, on a real Kafka 4.1.1 broker: a
stalled group is unhealthy, a caught-up one healthy, and one sample is not enough to tell."""

from __future__ import annotations

import json

from kafkadiag.exitcodes import ExitCode
from tests.infra import workload
from tests.infra.cli import run
from tests.infra.servers import ServerProcess

SAMPLES = ["--samples", "2", "--interval", "0.5"]


def stalled_and_caught_up_groups(bootstrap: str) -> tuple[str, str, str]:
    """A group stopped at offset 1 of 10 records (lag 9) and one committed at the end (lag 0)."""
    topic = workload.unique("status")
    workload.create_topic(bootstrap, topic, 1)
    workload.produce(bootstrap, topic, {0: 10})
    stalled, caught_up = workload.unique("stalled"), workload.unique("caught-up")
    workload.commit_offsets_without_joining(bootstrap, stalled, {(topic, 0): 1})
    workload.commit_offsets_without_joining(bootstrap, caught_up, {(topic, 0): 10})
    return topic, stalled, caught_up


def test_check_without_threshold_fails_a_stalled_group_and_passes_a_caught_up_one(
    broker: ServerProcess,
) -> None:
    # GIVEN a group whose offset does not move while it lags, and one that is caught up
    topic, stalled, caught_up = stalled_and_caught_up_groups(broker.address)
    base = ["check", "--bootstrap-server", broker.address]
    # WHEN check runs over two samples with no threshold
    code, out, err = run([*base, "--group", stalled, "--group", caught_up, *SAMPLES, "--format", "json"])
    # THEN the stalled group is unhealthy by its status (exit 1) and the caught-up one healthy
    assert code == ExitCode.FINDINGS, (out, err)
    verdicts = {entry["group"]: entry for entry in json.loads(out)["groups"]}
    assert verdicts[stalled]["verdict"] == "unhealthy" and "status" in verdicts[stalled]["checks"]
    (violation,) = verdicts[stalled]["violations"]
    assert violation["check"] == "status" and (violation["topic"], violation["partition"]) == (topic, 0)
    assert violation["message"] == f"{topic}/0: status STOP (group status ERR)"
    assert verdicts[caught_up]["verdict"] == "healthy" and verdicts[caught_up]["violations"] == []
    # and the caught-up group alone passes (exit 0), the text naming the status it judged
    code, out, err = run([*base, "--group", caught_up, *SAMPLES])
    assert code == ExitCode.OK, (out, err)
    assert out.startswith(f"HEALTHY   {caught_up}"), out


def test_check_without_threshold_on_one_sample_says_it_cannot_judge_and_exits_3(
    broker: ServerProcess,
) -> None:
    # GIVEN the same stalled group
    topic, stalled, _ = stalled_and_caught_up_groups(broker.address)
    # WHEN check takes one sample with no threshold
    code, out, err = run(["check", "--bootstrap-server", broker.address, "--group", stalled])
    # THEN it does not call the group healthy: not checked (exit 3), saying why and what to pass
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "HEALTHY" not in out and f"UNCHECKED {stalled}" in out, out
    assert "one sample cannot tell a stopped consumer from a moving one" in out, out
    assert "--samples 2" in " ".join(err.split()), err
    # and a threshold is judged on one sample as before: lag 9 against --max-lag 5 is unhealthy
    code, out, err = run(
        ["check", "--bootstrap-server", broker.address, "--group", stalled, "--max-lag", "5"]
    )
    assert code == ExitCode.FINDINGS, (out, err)
    assert f"max-lag: {topic}/0: lag 9 > 5" in out, out
