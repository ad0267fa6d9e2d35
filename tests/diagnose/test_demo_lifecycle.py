"""`kafkadiag demo`'s life cycle as a user drives it: `--keep` leaves the sandbox running with its
connection details until Ctrl-C, Ctrl-C while it starts stops what was started, and a machine
without Java, or that can fetch no Kafka release (no Maven, or Maven that cannot reach Maven
Central), gets a message saying what to do and exit 3. Every case: no sandbox process left behind.
The demo runs as the installed command would, in its own process, and is signalled as a terminal
would signal it (SIGINT)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import time
from pathlib import Path

from kafkadiag.exitcodes import ExitCode
from tests.infra.demo import Demo, alive
from tests.infra.servers import free_port


def test_keep_leaves_the_sandbox_running_until_ctrl_c() -> None:
    demo = Demo("--scenario", "python", "--keep", "--format", "json")
    try:
        demo.wait_for(r"Press Ctrl-C to stop it")
        started = demo.pids()
        # THEN after the diagnosis the sandbox still runs, and says how to reach it
        assert len(started) == 3 and alive(started) == started
        assert "The sandbox keeps running" in demo.progress
        assert "Commands to try in another shell:" in demo.progress and "kafkadiag " in demo.progress
        assert re.search(r"Broker: +127\.0\.0\.1:\d+ .*Apache Kafka 3\.9\.1", demo.progress)
        time.sleep(1)
        assert alive(started) == started
        # WHEN Ctrl-C THEN everything stops
        code = demo.interrupt()
    finally:
        demo.kill_if_running()
    assert code == ExitCode.OK, demo.progress
    assert "every sandbox process was stopped" in demo.progress
    assert demo.left_behind() == []


def test_ctrl_c_while_starting_stops_what_was_started() -> None:
    demo = Demo("--scenario", "old-consumer")
    try:
        demo.wait_for(r"\(pid \d+\)")  # ZooKeeper is up, the Kafka broker is still starting
        code = demo.interrupt()
    finally:
        demo.kill_if_running()
    assert demo.pids(), demo.progress
    # nor any process it had started whose pid it never printed (the broker still starting)
    assert demo.left_behind() == []
    assert "Interrupted: every sandbox process was stopped" in demo.progress
    assert code == ExitCode.INTERRUPTED  # nothing was diagnosed
    assert "Traceback" not in demo.progress


def jdk_only_path(tmp_path: Path) -> str:
    """A PATH with the Python environment and the JDK's own bin/ (java, javac, jstack, jcmd), and
    nothing else: no Maven."""
    java = shutil.which("java")
    assert java, "the tests need a JDK on PATH"
    jdk_bin = Path(java).resolve().parent
    assert not (jdk_bin / "mvn").exists()
    return os.pathsep.join([str(Path(sys.executable).parent), str(jdk_bin)])


def test_without_java_the_demo_says_what_to_install(tmp_path: Path) -> None:
    # A PATH holding the Python environment only: no java, javac, jstack
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)
    demo = Demo("--scenario", "python", env=env)
    code = demo.finish(timeout_s=120)
    assert code == ExitCode.INPUT_UNREADABLE, demo.progress
    assert "java is not on PATH" in demo.progress and "Install a JDK" in demo.progress
    assert "Traceback" not in demo.progress
    assert demo.left_behind() == []


def test_without_maven_and_an_empty_cache_the_demo_says_how_to_get_kafka(tmp_path: Path) -> None:
    # GIVEN a JDK but no mvn, and a cache that holds no Kafka release
    env = {**os.environ, "PATH": jdk_only_path(tmp_path), "KAFKADIAG_CACHE": str(tmp_path / "cache")}
    demo = Demo(env=env)
    code = demo.finish(timeout_s=120)
    # THEN exit 3 before any server starts, saying what to install or where to put the jars
    assert code == ExitCode.INPUT_UNREADABLE, demo.progress
    assert "Maven (mvn) is not on PATH" in demo.progress and "Install Maven" in demo.progress
    assert str(tmp_path / "cache") in demo.progress  # where the jars go
    assert "Traceback" not in demo.progress and demo.pids() == []
    assert demo.left_behind() == []


def maven_home_with_mirror(tmp_path: Path, port: int) -> Path:
    """A user home for Maven (-Duser.home) whose settings send every download to 127.0.0.1:port,
    and whose local repository is empty: a machine that cannot reach Maven Central."""
    home = tmp_path / "maven-home"
    (home / ".m2").mkdir(parents=True)
    (home / ".m2" / "settings.xml").write_text(
        "<settings><mirrors><mirror><id>unreachable</id><mirrorOf>*</mirrorOf>"
        f"<url>http://127.0.0.1:{port}/maven2</url></mirror></mirrors></settings>\n"
    )
    return home


def test_when_maven_cannot_reach_maven_central_the_demo_says_so(tmp_path: Path) -> None:
    # GIVEN the real mvn, whose only repository refuses connections, and an empty cache
    home = maven_home_with_mirror(tmp_path, free_port())
    env = {**os.environ, "KAFKADIAG_CACHE": str(tmp_path / "cache"), "MAVEN_OPTS": f"-Duser.home={home}"}
    demo = Demo(env=env)
    code = demo.finish(timeout_s=300)
    # THEN exit 3 with Maven's own reason and what to check, and nothing half-fetched in the cache
    assert code == ExitCode.INPUT_UNREADABLE, demo.progress
    assert "Maven could not fetch Apache Kafka" in demo.progress, demo.progress
    assert "reaches Maven Central" in demo.progress
    assert "Traceback" not in demo.progress and demo.pids() == []
    assert not list((tmp_path / "cache").rglob("*.jar"))
    assert demo.left_behind() == []


def test_ctrl_c_while_maven_fetches_stops_maven(tmp_path: Path) -> None:
    # GIVEN a repository that accepts connections and never answers, so the fetch hangs
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(50)  # never accepted: the kernel completes the connections, nobody answers
        home = maven_home_with_mirror(tmp_path, silent.getsockname()[1])
        env = {**os.environ, "KAFKADIAG_CACHE": str(tmp_path / "cache"), "MAVEN_OPTS": f"-Duser.home={home}"}
        demo = Demo(env=env)
        try:
            demo.wait_for(r"fetching Apache Kafka", timeout_s=60)
            time.sleep(2)  # Maven is up and waiting for the repository
            assert demo.children, "Maven was not started"
            # WHEN Ctrl-C
            code = demo.interrupt()
        finally:
            demo.kill_if_running()
    # THEN Maven is gone with the demo, and nothing half-fetched stays in the cache
    assert code == ExitCode.INTERRUPTED, demo.progress
    assert "Interrupted: every sandbox process was stopped" in demo.progress
    assert demo.left_behind() == []
    assert not list((tmp_path / "cache").rglob("*.jar"))
