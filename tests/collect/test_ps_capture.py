"""`kafkadiag ps` and `kafkadiag capture` on real processes: the sandbox's old-consumer JVM and
kafka-python service, a JVM with Kafka's client jar on its classpath, a ZooKeeper server that must
not be listed; bundles analysed offline exactly as the live dumps; every failure exits 3 leaving no
bundle behind."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kafkadiag.exitcodes import ExitCode
from kafkadiag.sandbox.scenarios import running_sandbox
from tests.conftest import REPO
from tests.infra.cli import run


def ps_json() -> list[dict[str, Any]]:
    code, out, err = run(["ps", "--format", "json"])
    assert code == ExitCode.OK, err
    document = json.loads(out)
    assert document["schema"] == "kafkadiag.ps" and document["version"] == 1
    return list(document["processes"])


def idle_jvm(tmp_path: Path, *arguments: str) -> subprocess.Popen[str]:
    source = tmp_path / "Idle.java"
    source.write_text(
        "public class Idle { public static void main(String[] a) throws Exception {"
        ' System.out.println("READY"); Thread.sleep(600000); } }'
    )
    process = subprocess.Popen(
        ["java", "-Xmx32m", *arguments, str(source)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "READY"
    return process


def test_ps_lists_consumers_by_classpath_config_and_threads_but_not_servers(
    tmp_path: Path, zookeeper
) -> None:
    # GIVEN a JVM with kafka-clients on its classpath and a consumer config file named on its
    # command line, the sandbox's old consumer (Kafka 0.8.2.2's core jar and, as its dependency,
    # kafka-clients on its classpath: its threads tell which consumer it runs), and a ZooKeeper server
    import zipfile

    with zipfile.ZipFile(tmp_path / "kafka-clients-3.7.0.jar", "w") as jar:  # an empty, valid jar
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    config = tmp_path / "consumer.properties"
    config.write_text("bootstrap.servers=b:9092\ngroup.id=from-config\nclient.id=billing-7\n")
    client = idle_jvm(tmp_path, "-cp", str(tmp_path / "kafka-clients-3.7.0.jar"), "-Dgroup.id=from-flag",
                      f"-Dconsumer.config={config}")  # fmt: skip
    try:
        with running_sandbox("old-consumer") as sandbox:
            started = time.perf_counter()
            listed = {entry["pid"]: entry for entry in ps_json()}
            elapsed = time.perf_counter() - started
            # THEN both consumers are listed with what identifies them, the server is not
            assert listed[client.pid]["kind"] == "new-consumer" and listed[client.pid]["runtime"] == "jvm"
            assert listed[client.pid]["groups"] == ["from-config", "from-flag"]
            assert listed[client.pid]["client_ids"] == ["billing-7"]
            old = listed[sandbox.pid]
            assert old["kind"] == "old-consumer" and old["threads"] > 10
            assert old["evidence"][0] == "command line: kafka_2.10-0.8.2.2.jar", old["evidence"]
            # one of the old consumer's own threads (fetcher, leader finder, scheduler), cut to 15
            # characters as /proc names them
            assert re.fullmatch(
                r"thread: (ConsumerFetcher|.*leader-finder.*|kafka-consumer-)", old["evidence"][1]
            )
            assert zookeeper.pid not in listed and sandbox.zookeeper.pid not in listed
            assert elapsed < 30
    finally:
        client.kill()
        client.wait()
    code, out, _ = run(["ps"])
    assert code == ExitCode.OK and ("PID" in out or "No Kafka consumer process" in out)


def test_capture_of_a_stalled_jvm_is_analysed_offline_as_live(tmp_path: Path) -> None:
    with running_sandbox("old-consumer") as sandbox:
        sandbox.wait_until_consuming()
        sandbox.trigger_incident()
        sandbox.wait_until_stalled()
        bundle = tmp_path / "bundle"
        code, out, err = run(["capture", "--pid", str(sandbox.pid), "--count", "3", "--interval", "0.3",
                              "--out", str(bundle)])  # fmt: skip
        assert code == ExitCode.OK, err
        live = json.loads(run(["diagnose", *sandbox.diagnose_arguments(), "--format", "json"])[1])
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["schema"] == "kafkadiag.capture" and manifest["pid"] == sandbox.pid
    assert manifest["runtime"] == "jvm" and manifest["failures"] == []
    assert "openjdk" in manifest["tool"]["version"].lower() and manifest["user"] == "root"
    assert [entry["file"] for entry in manifest["dumps"]] == ["dump-001.txt", "dump-002.txt", "dump-003.txt"]
    # each dump exactly as jstack printed it; per-thread CPU joined by Linux thread id (= nid)
    first = (bundle / "dump-001.txt").read_text()
    assert "Full thread dump" in first and "ConsumerFetcherThread-" in first
    cpu = json.loads((bundle / "threads-cpu-001.json").read_text())
    nids = {int(nid, 16) for nid in re.findall(r"nid=0x([0-9a-f]+)", first)}
    assert len(nids & {int(tid) for tid in cpu}) > 10
    assert any(entry["comm"].startswith("ConsumerFetcher") for entry in cpu.values())
    metrics = json.loads((bundle / "metrics.json").read_text())
    assert any("MaxLag" in bean["name"] for bean in metrics["beans"])
    # the bundle is analysed as one series of 3 dumps; its dump findings are the live diagnosis's
    analysis = json.loads(run(["dump", "analyze", str(bundle), "--format", "json"])[1])
    assert analysis["series"][0]["dumps"] == 3
    offline = json.loads(run(["diagnose", "--from", str(bundle), "--format", "json"])[1])
    dump_rules = lambda doc: sorted(  # noqa: E731
        {
            (f["rule"], f["threads"][0])
            for f in doc["findings"]
            if f["source"] == "dump" and f["rule"] != "KD501"
        }
    )
    assert dump_rules(offline) == dump_rules(live)
    assert {"KD201", "KD202", "KD203"} <= {rule for rule, _ in dump_rules(offline)}
    # files honour the umask
    assert oct((bundle / "dump-001.txt").stat().st_mode & 0o777) == oct(0o666 & ~current_umask())


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_capture_of_a_python_consumer_uses_py_spy(tmp_path: Path) -> None:
    with running_sandbox("python") as sandbox:
        sandbox.wait_until_consuming()
        code, _, err = run(["capture", "--pid", str(sandbox.pid), "--count", "2", "--interval", "0.2",
                            "--out", str(tmp_path / "py")])  # fmt: skip
        assert code == ExitCode.OK, err
    manifest = json.loads((tmp_path / "py" / "manifest.json").read_text())
    assert manifest["runtime"] == "python" and "py-spy" in manifest["tool"]["version"]
    assert "MainThread" in (tmp_path / "py" / "dump-001.txt").read_text()
    assert "metrics" not in manifest


def test_capture_failures_leave_no_bundle(tmp_path: Path) -> None:
    jvm = idle_jvm(tmp_path)
    try:
        # an existing non-empty directory: usage error, untouched
        taken = tmp_path / "taken"
        taken.mkdir()
        (taken / "notes.txt").write_text("mine")
        code, _, err = run(["capture", "--pid", str(jvm.pid), "--out", str(taken)])
        assert (
            code == ExitCode.USAGE and "not an empty directory" in err and os.listdir(taken) == ["notes.txt"]
        )
        # a jstack that is not there
        code, _, err = run(
            ["capture", "--pid", str(jvm.pid), "--out", str(tmp_path / "a"), "--jstack", "/nonexistent"]
        )
        assert code == ExitCode.INPUT_UNREADABLE and "/nonexistent" in err
        # kafkadiag as another user than the JVM's
        completed = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m", "kafkadiag",
             "capture", "--pid", str(jvm.pid), "--out", "/tmp/kafkadiag-capture-as-nobody"],
            capture_output=True, text=True, timeout=120, cwd="/tmp",
            env={**os.environ, "HOME": "/tmp", "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        assert completed.returncode == ExitCode.INPUT_UNREADABLE, completed.stderr
        assert (
            "runs as user root, kafkadiag as nobody" in completed.stderr
            and "sudo -u root" in completed.stderr
        )
        assert not os.path.exists("/tmp/kafkadiag-capture-as-nobody")
    finally:
        jvm.kill()
        jvm.wait()
    # a process that exits in the middle of the capture
    short = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    code, _, err = run(
        ["capture", "--pid", str(short.pid), "--count", "5", "--interval", "1", "--out", str(tmp_path / "b")]
    )
    short.wait()
    assert code == ExitCode.INPUT_UNREADABLE and ("exited" in err or "no process" in err), err
    assert not (tmp_path / "b").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".b.")] == []


def test_ptrace_refused_names_the_sysctl_and_leaves_no_bundle(tmp_path: Path) -> None:
    # GIVEN a Python process of user nobody that made itself non-dumpable (PR_SET_DUMPABLE 0):
    # the kernel then refuses ptrace to anyone without CAP_SYS_PTRACE, its own user included,
    # exactly as kernel.yama.ptrace_scope=1 refuses it to a non-parent
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    env = {**os.environ, "HOME": "/tmp", "PYTHONPATH": str(REPO)}
    script = (
        "import ctypes, sys, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); "
        "print('READY', flush=True); time.sleep(120)"
    )
    target = subprocess.Popen(
        [*as_nobody, sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert target.stdout is not None and target.stdout.readline().strip() == "READY"
        out = f"/tmp/kafkadiag-ptrace-{target.pid}"
        # WHEN kafkadiag, as the same user, captures it with py-spy
        completed = subprocess.run(
            [*as_nobody, sys.executable, "-m", "kafkadiag", "capture", "--pid", str(target.pid),
             "--out", out],
            capture_output=True, text=True, timeout=120, cwd="/tmp", env=env,
        )  # fmt: skip
        # THEN exit 3 with what to do about ptrace, and no bundle
        assert completed.returncode == ExitCode.INPUT_UNREADABLE, completed.stderr
        assert "kernel.yama.ptrace_scope" in completed.stderr and "CAP_SYS_PTRACE" in completed.stderr
        assert "Traceback" not in completed.stderr
        assert not os.path.exists(out)
    finally:
        target.kill()
        target.wait()
