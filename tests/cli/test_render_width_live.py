"""The reports of the commands that read a live cluster and live JVMs, at 80 and 120 columns:
`lag` (with the OWNER column of an old consumer's group), `lag --samples`, `lag --watch`, `check`,
`maxlag`, `diagnose` of the live sources, and `ps`. No line is wider than the terminal and no
group, topic, owner or thread name is broken across lines.

What is real: ZooKeeper and the Kafka broker (tests.infra.fixtures), the maxlag reproducer JVM
(the old consumer's fetcher and stream threads over bounded queues, read by PID through the JDK's
agent), a JVM with kafka-clients on its classpath for `ps`."""

from __future__ import annotations

import os
import re
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.cli.render_checks import WIDTHS, assert_fits, render
from tests.infra.cli import run_json, watch_until
from tests.infra.servers import ServerProcess
from tests.infra.workload import Cluster, commit_offsets_without_joining, create_topic, produce, unique
from tests.maxlag.reproducer import Reproducer, compile_reproducer, start_reproducer
from tests.maxlag.scenario import Deployment, deploy
from tests.maxlag.test_maxlag_cli import SETTINGS, drive_to_stall


@pytest.fixture(scope="module")
def stalled(
    zookeeper: ServerProcess, broker: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """GIVEN an old consumer whose first stream stopped draining: its queue full, its fetcher
    blocked, the other stream starving; its group's offsets and owners in the real ZooKeeper
    (a chroot of the session's, for the whole module: the stall takes a while to build)."""
    cluster = Cluster(zookeeper.address, broker.address)
    cache = tmp_path_factory.mktemp("xdg-cache")  # kafkadiag compiles its JMX client there
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    classes = compile_reproducer(tmp_path_factory.mktemp("reproducer-classes"))
    started: list[Reproducer] = []

    def start(*args: object, **kwargs: object) -> Reproducer:
        reproducer = start_reproducer(classes, *args, **kwargs)
        started.append(reproducer)
        return reproducer

    try:
        deployment = deploy(cluster, start, SETTINGS, prefix="render-width-orders-service")
        drive_to_stall(deployment)
        yield deployment
    finally:
        for reproducer in started:
            reproducer.stop()
        cluster.close()
        if previous is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = previous


def _names(deployment: Deployment) -> tuple[str, ...]:
    consumer = deployment.consumer.consumer_id
    return (deployment.group.group, deployment.topic, f"{consumer}-0", f"{consumer}-1")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "command, exit_codes",
    [
        (["lag"], (ExitCode.OK, ExitCode.FINDINGS)),
        (["lag", "--samples", "2", "--interval", "1s"], (ExitCode.OK, ExitCode.FINDINGS)),
        (["check", "--samples", "2", "--interval", "1s"], (ExitCode.OK, ExitCode.FINDINGS)),
        (["maxlag", "--pid", "{pid}"], (ExitCode.FINDINGS,)),
        (["lag", "--pid", "{pid}"], (ExitCode.OK, ExitCode.FINDINGS)),
        (["diagnose", "--pid", "{pid}"], (ExitCode.FINDINGS,)),
    ],
    ids=["lag", "lag-samples", "check", "maxlag", "lag-with-fetcher", "diagnose-live"],
)
def test_live_reports_fit_the_width_and_keep_names_whole(
    stalled: Deployment, command: list[str], exit_codes: tuple[int, ...], width: int
) -> None:
    # WHEN the command reads the cluster (and the JVM) in a pipe of `width` columns
    args = [part.replace("{pid}", str(stalled.pid)) for part in command] + stalled.cli_args()
    code, out, err = render(args, width)
    # THEN it reports as usual, every line fits, and the group, topic and owners are whole
    assert code in exit_codes, out + err
    # check names the group; diagnose the group, the topic and the owner of the stopped stream
    names = {"check": _names(stalled)[:1], "diagnose": _names(stalled)[:3]}.get(command[0], _names(stalled))
    assert_fits(out, width, names)


def test_at_80_columns_the_lag_owner_goes_under_its_partition(stalled: Deployment) -> None:
    code, out, err = render(["lag", *stalled.cli_args()], 80)
    assert code in (ExitCode.OK, ExitCode.FINDINGS), out + err
    # The owner (a consumer id of about 50 characters) is on the line under its partition, whole;
    # the numbers lag is read by stay in the row.
    owner = f"{stalled.consumer.consumer_id}-0"
    assert f"OWNER: {owner}" in out, out
    assert not any(owner in line and stalled.topic in line for line in out.splitlines()), out


def test_check_verdicts_in_colour_only_when_asked(stalled: Deployment) -> None:
    args = ["check", "--samples", "2", "--interval", "1s", *stalled.cli_args()]
    code, coloured, err = render(["--color", "always", *args], 100)
    assert code == ExitCode.FINDINGS, coloured + err
    # the stopped partitions make the group unhealthy: the verdict in bold red, then its group
    assert f"\x1b[1;31mUNHEALTHY\x1b[0m {stalled.group.group}" in coloured, coloured
    code, plain, err = render(args, 100)
    assert f"UNHEALTHY {stalled.group.group}" in plain and "\x1b[" not in plain, plain


@pytest.fixture()
def consumer_jvm(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A JVM with kafka-clients on its classpath and a consumer config naming a long group id."""
    with zipfile.ZipFile(tmp_path / "kafka-clients-3.7.0.jar", "w") as jar:  # an empty, valid jar
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    config = tmp_path / "consumer.properties"
    config.write_text("group.id=render-width-billing-reconciliation-service\nclient.id=billing-7\n")
    source = tmp_path / "Idle.java"
    source.write_text(
        "public class Idle { public static void main(String[] a) throws Exception {"
        ' System.out.println("READY"); Thread.sleep(600000); } }'
    )
    process = subprocess.Popen(
        ["java", "-Xmx32m", "-cp", str(tmp_path / "kafka-clients-3.7.0.jar"), f"-Dconsumer.config={config}",
         str(source)], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "READY"
        yield process
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("width", WIDTHS)
def test_ps_fits_the_width(consumer_jvm: subprocess.Popen[str], width: int) -> None:
    code, out, err = render(["ps"], width)
    assert code == ExitCode.OK, err
    assert_fits(out, width, ("render-width-billing-reconciliation-service", "billing-7"))
    assert any(line.lstrip().startswith(str(consumer_jvm.pid)) for line in out.splitlines()), out


def test_lag_and_check_findings_in_colour_as_dump_analyze_prints_them(
    zookeeper: ServerProcess, broker: ServerProcess
) -> None:
    # GIVEN an old consumer's group with a partition that no thread owns
    cluster = Cluster(zookeeper.address, broker.address)
    try:
        topic = cluster.topic(2, {0: 5, 1: 5}, prefix="render-width-colour")
        group = cluster.old_group("render-width-colour")
        owner = f"{group.join({topic: 1})}-0"
        group.own({(topic, 0): owner})
        group.commit({(topic, 0): 2, (topic, 1): 2})
        args = ["--zookeeper", cluster.zookeeper, "--group", group.group, "--samples", "2"]
        args += ["--interval", "1s"]
        # WHEN its lag and its check are shown with --color always, and lag without colour
        _, lag, lag_err = render(["--color", "always", "lag", *args], 100)
        _, check, check_err = render(["--color", "always", "check", *args], 100)
        _, plain, plain_err = render(["lag", *args], 100)
    finally:
        cluster.close()
    # THEN each finding leads with its severity word in its colour and its rule code in bold (lag),
    # or with its rule code in red (a failed check)
    severity = r"\x1b\[(1;31|33|36)m(ERROR|WARNING|INFO)\x1b\[0m"
    assert re.search(severity + r" \x1b\[1mKD6\d\d\x1b\[0m ", lag), lag + lag_err
    assert re.search(r"\x1b\[1;31mKD6\d\d [a-z-]+:\x1b\[0m ", check), check + check_err
    # ... and without colour the same words are plain text
    assert re.search(r"^  (ERROR|WARNING|INFO) KD6\d\d [a-z-]+: ", plain, re.MULTILINE), plain + plain_err
    assert "\x1b[" not in plain


def test_maxlag_verdict_code_in_colour(stalled: Deployment) -> None:
    code, out, err = render(
        ["--color", "always", "maxlag", "--pid", str(stalled.pid), *stalled.cli_args()], 100
    )
    assert code == ExitCode.FINDINGS, out + err
    # the unhealthy client's verdict leads with its rule code in bold red, then its title
    assert re.search(r"\x1b\[1;31mKD70\d\x1b\[0m [A-Z]", out), out


@pytest.mark.parametrize("width", WIDTHS)
def test_one_owner_of_every_partition_is_said_once_for_the_group(
    zookeeper: ServerProcess, broker: ServerProcess, width: int
) -> None:
    # GIVEN an old consumer whose one stream thread owns all four partitions of its topic
    cluster = Cluster(zookeeper.address, broker.address)
    try:
        topic = cluster.topic(4, {partition: 5 for partition in range(4)}, prefix="render-width-ledger")
        group = cluster.old_group("render-width-one")
        owner = f"{group.join({topic: 1})}-0"
        group.own({(topic, partition): owner for partition in range(4)})
        group.commit({(topic, partition): 2 for partition in range(4)})
        args = ["lag", "--zookeeper", cluster.zookeeper, "--group", group.group]
        # WHEN its lag is shown
        code, out, err = render(args, width)
        document = run_json(args)
    finally:
        cluster.close()
    assert code == ExitCode.OK, out + err
    assert_fits(out, width, (group.group, topic, owner))
    if width == 80:
        # THEN at 80 columns, where the owner leaves the row, it is said once for the group
        flat = " ".join(out.split())
        assert out.count(owner) == 1 and f"OWNER: {owner} (all partitions)" in flat, out
    # ... and the JSON report still names it for every partition
    (reported,) = document["groups"]
    assert [partition["owner"] for partition in reported["partitions"]] == [owner] * 4


@pytest.mark.parametrize("width", WIDTHS)
def test_lag_watch_fits_the_width(broker: ServerProcess, width: int) -> None:
    # GIVEN a group with lag on the real broker, under names long enough to need wrapping
    topic, group = unique("render-width-watch-payments-settlement"), unique("render-width-watch-group")
    create_topic(broker.address, topic, 3)
    produce(broker.address, topic, {0: 4, 1: 4, 2: 4})
    commit_offsets_without_joining(broker.address, group, {(topic, p): 1 for p in range(3)})
    # WHEN `lag --watch` runs in a pipe of `width` columns, stopped after its first refresh
    env = {**os.environ, "KAFKADIAG_WIDTH": "", "COLUMNS": str(width)}
    process, text = watch_until(
        ["lag", "--bootstrap-server", broker.address, "--group", group, "--watch", "--interval", "0.5"],
        lambda shown: shown.count(b"kafkadiag lag --watch") >= 2,
        env,
    )
    # THEN every view fits and keeps the group and topic whole
    assert process.returncode == ExitCode.OK, process.stderr.read() if process.stderr else ""
    assert text.count(f"Group {group}") >= 2, text
    assert_fits(text, width, (group, topic))
