"""docs/prometheus.md: its cron example, run as written (only the addresses, the output file and
the interval changed), exports statuses. Its metric reference is checked in tests/docs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from kafkadiag.exitcodes import ExitCode
from tests.infra import workload
from tests.infra.cli import run
from tests.infra.workload import Cluster
from tests.prometheus.promtool import REPOSITORY, promtool

PAGE = REPOSITORY / "docs" / "prometheus.md"


def test_the_cron_example_exports_statuses(cluster: Cluster, tmp_path: Path) -> None:
    # GIVEN the documented cron line, pointed at the test broker and a file here, 1 s apart
    (line,) = [line for line in PAGE.read_text().splitlines() if re.match(r"^\*/5 \* \* \* \* ", line)]
    argv = shlex.split(line)[6:]
    assert argv[0] == "kafkadiag" and "--samples" in argv and "--format" in argv, argv
    topic = cluster.topic(1, {0: 6})
    group = workload.unique("cron")
    workload.commit_offsets_without_joining(cluster.bootstrap, group, {(topic, 0): 2})
    target = tmp_path / "kafkadiag_lag.prom"
    replaced = {"--bootstrap-server": cluster.bootstrap, "--interval": "1s", "-o": str(target)}
    argv = [replaced.get(argv[index - 1], word) for index, word in enumerate(argv)]
    # WHEN it runs (restricted to this test's group: the shared broker holds other tests' groups)
    argv[argv.index("--all-groups")] = f"--group={group}"
    code, _, err = run(argv[1:])
    # THEN the file holds a status for the group and its partition, and passes promtool's linter
    assert code == ExitCode.OK, err
    text = target.read_text()
    assert re.search(
        rf'kafkadiag_group_status\{{cluster="prod",group="{group}",source="kafka",status="\w+"\}} 1', text
    ), text
    assert re.search(rf'kafkadiag_partition_status\{{[^}}]*group="{group}"[^}}]*status="\w+"\}} 1', text), (
        text
    )
    assert 'kafkadiag_collection_samples{cluster="prod"} 4' in text, text
    lint = promtool("check", "metrics", stdin=text)
    assert lint.returncode == 0 and not lint.stdout.strip(), lint.stdout + lint.stderr
