"""Thread dumps of a running process, taken with the tool that fits it: `jstack -l` (from the
target JVM's own JDK where it has one) for a JVM, `py-spy dump` for Python. Read-only: both only
read the process's threads (jstack through the JVM's attach mechanism, py-spy through ptrace)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace

from kafkadiag.errors import InputUnreadableError
from kafkadiag.model import ThreadDump

JVM = "jvm"
PYTHON = "python"


class ThreadDumpError(InputUnreadableError):
    HELP_TEXT = "Run kafkadiag as the process's user (or root), and check that the process still runs."


@dataclass(frozen=True)
class LiveDump:
    pid: int
    runtime: str  # JVM or PYTHON
    tool: str  # the command line that took it, for the report
    text: str


def runtime_of(pid: int) -> tuple[str, str | None]:
    """(JVM or PYTHON, the executable's path when readable)."""
    import psutil

    try:
        process = psutil.Process(pid)
        name = process.name().lower()
        try:
            exe: str | None = process.exe()
        except (psutil.AccessDenied, psutil.ZombieProcess):
            exe = None
    except psutil.NoSuchProcess:
        raise ThreadDumpError(
            f"no process {pid}", help_text="`kafkadiag ps` lists the consumer processes."
        ) from None
    except psutil.AccessDenied:
        raise ThreadDumpError(f"process {pid} cannot be inspected by this user") from None
    base = os.path.basename(exe or name).lower()
    if base.startswith("java") or name.startswith("java"):
        return JVM, exe
    if base.startswith("python") or name.startswith("python"):
        return PYTHON, exe
    raise ThreadDumpError(
        f"process {pid} ({name}) is neither a JVM nor a Python interpreter",
        help_text="Name the consumer's process: `kafkadiag ps` lists them.",
    )


def jstack_for(java_exe: str | None) -> str:
    """The target JVM's own jstack (its version matches), else JAVA_HOME's, else the PATH's."""
    candidates = []
    if java_exe:
        candidates.append(os.path.join(os.path.dirname(java_exe), "jstack"))
    if os.environ.get("JAVA_HOME"):
        candidates.append(os.path.join(os.environ["JAVA_HOME"], "bin", "jstack"))
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("jstack")
    if found is None:
        raise ThreadDumpError(
            "jstack was not found (the target JVM is a JRE, and no JDK is on PATH or in JAVA_HOME)",
            help_text="Install a JDK of the target's version, or set JAVA_HOME to one.",
        )
    return found


def py_spy() -> str:
    beside = os.path.join(os.path.dirname(sys.executable), "py-spy")
    found = beside if os.access(beside, os.X_OK) else shutil.which("py-spy")
    if found is None:
        raise ThreadDumpError("py-spy was not found", help_text="Install it: pip install py-spy.")
    return found


def _tool(path: str) -> str:
    if not os.access(path, os.X_OK):
        raise ThreadDumpError(
            f"{path} is not an executable", help_text="Check the path given with --jstack / --py-spy."
        )
    return path


def take_dump(
    pid: int, timeout_s: float = 30.0, jstack: str | None = None, py_spy_path: str | None = None
) -> LiveDump:
    """`jstack`/`py_spy_path`: the tool to use instead of the one found."""
    runtime, exe = runtime_of(pid)
    _same_user_or_root(pid)
    if runtime == JVM and jstack is None:
        from kafkadiag.collect.hotspot_attach import AttachError, thread_dump

        try:
            return LiveDump(pid, runtime, "jstack -l", thread_dump(pid, min(timeout_s, 10.0)))
        except AttachError as error:
            if error.listener_absent:  # jstack would send the same signal and wait the same way
                raise ThreadDumpError(
                    f"JVM {pid} did not answer the attach request: {error}",
                    help_text="The JVM may run with -XX:+DisableAttachMechanism or be hung; `kill -3 "
                    f"{pid}` writes a thread dump to its stdout, which `kafkadiag dump analyze` reads.",
                ) from None
            # any other failure: jstack itself says what is wrong, in its own words
    if runtime == JVM:
        argv = [_tool(jstack) if jstack else jstack_for(exe), "-l", str(pid)]
    else:
        argv = [_tool(py_spy_path) if py_spy_path else py_spy(), "dump", "--pid", str(pid)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise ThreadDumpError(
            f"{os.path.basename(argv[0])} did not answer within {timeout_s:.0f} s for pid {pid}"
        ) from None
    if done.returncode != 0 or not done.stdout.strip():
        reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        help_text = None
        if not _alive(pid):
            raise ThreadDumpError(f"process {pid} exited while its threads were being dumped")
        if "ptrace" in done.stderr.lower() or "permission" in done.stderr.lower():
            help_text = (
                "Run as the process's user or root; ptrace may be restricted "
                "(sysctl kernel.yama.ptrace_scope=0, or CAP_SYS_PTRACE)."
            )
        raise ThreadDumpError(f"{' '.join(argv)} failed: {reason[0]}", help_text=help_text)
    tool = "jstack -l" if runtime == JVM else "py-spy dump"
    return LiveDump(pid, runtime, tool, done.stdout)


def _alive(pid: int) -> bool:
    import psutil

    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def _same_user_or_root(pid: int) -> None:
    """jstack attaches only to the same user's JVMs, py-spy needs ptrace rights over the process:
    say so before the tool fails with a less helpful message."""
    import getpass

    import psutil

    if os.geteuid() == 0:
        return
    try:
        process = psutil.Process(pid)
        owner_uid, owner = process.uids().effective, process.username()
    except (psutil.NoSuchProcess, psutil.AccessDenied, KeyError):
        return
    if owner_uid != os.geteuid():
        raise ThreadDumpError(
            f"process {pid} runs as user {owner}, kafkadiag as {getpass.getuser()}",
            help_text=f"Run kafkadiag as that user (sudo -u {owner} kafkadiag ...) or as root; py-spy "
            "also needs ptrace rights (kernel.yama.ptrace_scope, CAP_SYS_PTRACE).",
        )


def parsed_dumps(live: LiveDump) -> list[ThreadDump]:
    """Parsed from a temporary file, then named after the process: evidence reads `pid 4711 (jstack -l)`."""
    from kafkadiag.dumps import read_dumps

    name = f"pid {live.pid} ({live.tool})"
    with tempfile.TemporaryDirectory(prefix="kafkadiag-diagnose-") as directory:
        path = os.path.join(directory, "dump.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(live.text)
        parsed = list(read_dumps(path))
    return [replace(dump, source=name, pid=dump.pid if dump.pid is not None else live.pid) for dump in parsed]
