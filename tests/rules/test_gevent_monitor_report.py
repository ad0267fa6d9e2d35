"""gevent's own monitor thread, when it reports a greenlet that blocked the hub, is believed.

With `gevent.config.monitor_thread` on, gevent checks that its hub runs, and when a greenlet keeps
it from running longer than max_blocking_time it prints `... : Greenlet <...> appears to be
blocked` with that greenlet's stack, above its run info. GIVEN that output from a real process
whose greenlet calls the unpatched time.sleep, WHEN it is analysed, THEN KD406 names that
greenlet from gevent's report; the same program's plain run info, without the monitor, gets no
such finding.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.engine import analyze

pytest.importorskip("gevent")  # a dev dependency: the suite's environment has it

PROGRAM = """
import gevent, gevent.monkey
gevent.monkey.patch_all()
import sys, gevent.util

def blocker():
    gevent.monkey.get_original("time", "sleep")(1.5)  # not cooperative: the hub cannot run

def idle():
    gevent.sleep(100)

gevent.spawn(idle)
if sys.argv[1] == "monitor":
    gevent.config.monitor_thread = True
    gevent.config.max_blocking_time = 0.3
    gevent.get_hub().start_periodic_monitoring_thread()
    gevent.sleep(0.3)
    gevent.spawn(blocker)
    gevent.sleep(2)
else:
    gevent.sleep(0.3)
    gevent.util.print_run_info()
"""


def run(mode: str, tmp_path: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True, timeout=60, check=True
    )
    path = tmp_path / f"{mode}.txt"
    path.write_text(done.stdout + done.stderr)
    report = analyze(list(read_dumps(str(path))))
    return [name for finding in report.findings if finding.rule == "KD406" for name in finding.threads]


def test_gevents_report_of_a_blocked_hub_is_a_finding(tmp_path: Path) -> None:
    named = run("monitor", tmp_path)
    assert named and all(name.startswith("Greenlet") for name in named), named
    assert run("runinfo", tmp_path) == []
