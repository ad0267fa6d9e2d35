"""An NIO selector waiting for its channels is idle on every platform, not a thread that stopped.

A server or client I/O thread spends its life in Selector.select(): RUNNABLE in a native poll
whose name depends on the platform (epoll on Linux, kqueue on macOS, poll(2) on HP-UX and AIX,
/dev/poll on Solaris, the Windows sub-selectors). Two dumps of a healthy process show the same
stack, which must not be read as "did not move". The stacks below are the JDK's own frames of
each selector implementation, each in two dumps of one process, beside a thread that really is
stuck on a lock in both: that one is still reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.engine import analyze

SELECTORS = {
    "linux-epoll": [
        "sun.nio.ch.EPoll.wait(java.base@17/Native Method)",
        "sun.nio.ch.EPollSelectorImpl.doSelect(java.base@17/EPollSelectorImpl.java:120)",
    ],
    "poll": [
        "sun.nio.ch.PollArrayWrapper.poll0(Native Method)",
        "sun.nio.ch.PollArrayWrapper.poll(PollArrayWrapper.java:170)",
        "sun.nio.ch.PollSelectorImpl.doSelect(PollSelectorImpl.java:56)",
    ],
    "solaris-devpoll": [
        "sun.nio.ch.DevPollArrayWrapper.poll0(Native Method)",
        "sun.nio.ch.DevPollArrayWrapper.poll(DevPollArrayWrapper.java:223)",
        "sun.nio.ch.DevPollSelectorImpl.doSelect(DevPollSelectorImpl.java:98)",
    ],
    "windows": [
        "sun.nio.ch.WindowsSelectorImpl$SubSelector.poll0(Native Method)",
        "sun.nio.ch.WindowsSelectorImpl$SubSelector.poll(WindowsSelectorImpl.java:296)",
        "sun.nio.ch.WindowsSelectorImpl.doSelect(WindowsSelectorImpl.java:174)",
    ],
    "windows-wepoll": [
        "sun.nio.ch.WEPoll.wait(java.base@17/Native Method)",
        "sun.nio.ch.WEPollSelectorImpl.doSelect(java.base@17/WEPollSelectorImpl.java:111)",
    ],
}
SELECT = [
    "sun.nio.ch.SelectorImpl.lockAndDoSelect(SelectorImpl.java:86)",
    "sun.nio.ch.SelectorImpl.select(SelectorImpl.java:97)",
]


def two_dumps(native: list[str]) -> str:
    selector = "\n".join(
        f"\tat {frame}"
        for frame in [
            *native,
            *SELECT,
            "org.example.Server.run(Server.java:10)",
            "java.lang.Thread.run(Thread.java:748)",
        ]
    )
    dumps = []
    for second in ("00", "05"):
        dumps.append(
            f"2024-01-01 10:00:{second}\n"
            "Full thread dump Java HotSpot(TM) 64-Bit Server VM (25.181-b13 mixed mode):\n\n"
            '"io-selector" #10 daemon prio=5 os_prio=0 tid=0x00007f0000000100 nid=0x64 runnable '
            "[0x00007f0000000000]\n"
            "   java.lang.Thread.State: RUNNABLE\n"
            f"{selector}\n\n"
            '"ledger-writer" #11 prio=5 os_prio=0 tid=0x00007f0000000200 nid=0x65 waiting for monitor entry '
            "[0x00007f0000000000]\n"
            "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
            "\tat org.example.Ledger.post(Ledger.java:20)\n"
            "\t- waiting to lock <0x00000000c0000010> (a org.example.Ledger)\n"
            "\tat java.lang.Thread.run(Thread.java:748)\n\n"
            "JNI global references: 10\n\n"
        )
    return "".join(dumps)


@pytest.mark.parametrize("platform", sorted(SELECTORS))
def test_a_selector_in_two_dumps_is_idle_and_a_blocked_thread_is_not(tmp_path: Path, platform: str) -> None:
    # GIVEN two dumps of one process: an I/O thread selecting, a thread blocked on a lock
    path = tmp_path / "series.txt"
    path.write_text(two_dumps(SELECTORS[platform]))
    # WHEN the series is analysed
    report = analyze(list(read_dumps(str(path))))
    # THEN the thread that did not move is reported, the selector is not
    not_moving = {
        thread for finding in report.findings if finding.rule == "KD501" for thread in finding.threads
    }
    assert "ledger-writer" in not_moving
    assert "io-selector" not in not_moving


def test_a_datagram_listener_waiting_for_a_packet_is_idle_and_a_socket_read_is_not(corpus: Path) -> None:
    from kafkadiag.rules import stacks

    # GIVEN a real Jenkins dump (JDK 7): its UDP monitoring thread RUNNABLE in the datagram
    # receive, its AJP workers RUNNABLE in socket reads of their connections
    (dump,) = list(read_dumps(str(corpus / "dumpling/factory/oraclejdk-1.7.0_51.log")))
    threads = {thread.name: thread for thread in dump.threads}
    listener = threads["Jenkins UDP 33848 monitoring thread"]
    reader = threads["ajp-/127.0.0.1:8009-30"]
    assert listener.frames[0].function == "java.net.PlainDatagramSocketImpl.receive0"
    # THEN the listener waits for work by design; a worker reading its connection may be busy
    assert stacks.is_idle_wait(listener)
    assert not stacks.is_idle_wait(reader)
