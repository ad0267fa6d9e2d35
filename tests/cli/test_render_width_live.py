"""The reports of the commands that read a live cluster and live JVMs, at 80 and 120 columns:
`lag` (with the OWNER column of an old consumer's group), `lag --samples`, `check`, `maxlag`,
`diagnose` of the live sources, and `ps`. No line is wider than the terminal and no group, topic,
owner or thread name is broken across lines.

What is real: ZooKeeper and the Kafka broker (tests.infra.fixtures), the maxlag reproducer JVM
(the old consumer's fetcher and stream threads over bounded queues, read by PID through the JDK's
agent), a JVM with kafka-clients on its classpath for `ps`."""

from __future__ import annotations

import os
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.cli.render_checks import WIDTHS, assert_fits, render
from tests.infra.servers import ServerProcess
from tests.infra.workload import Cluster
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
