"""A hung test's stacks as pytest-timeout prints them: each thread under its own name and ident.

GIVEN a real pytest run whose test hangs waiting on an event another thread never sets, stopped by
pytest-timeout (thread method, which prints every thread's stack under `~~~ Stack of NAME (IDENT)
~~~`), WHEN its output is read, THEN the threads carry their names and idents, and the hung ones
are read as waiting.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.pytraceback import thread_identity
from kafkadiag.model import ThreadStatus

HANGING_TEST = """
import threading

def test_hangs():
    never = threading.Event()
    helper = threading.Thread(target=never.wait, name="helper", daemon=True)
    helper.start()
    never.wait()
"""


def test_pytest_timeout_stacks_are_threads_named_as_printed(tmp_path: Path) -> None:
    (tmp_path / "test_hang.py").write_text(HANGING_TEST)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--timeout=2",
            "--timeout-method=thread",
            "-q",
            "test_hang.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Stack of helper (" in run.stdout + run.stderr, run.stdout[-2000:]
    path = tmp_path / "output.txt"
    path.write_text(run.stdout + run.stderr)
    (dump,) = list(read_dumps(str(path)))
    names = {thread.name: thread for thread in dump.threads}
    assert {"helper", "MainThread"} <= set(names)
    for name in ("helper", "MainThread"):
        assert (thread_identity(names[name].header)[1] or "").isdigit()
        assert names[name].status is ThreadStatus.IDLE
