"""KD108 names the threads of a ring of puts through one channel, and only when no other thread of
the dump could be taking from the channel's queues."""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED
from .dumptext import thread_block

WILD = Path(__file__).resolve().parents[1] / "wild" / "dumps"
RING = CAPTURED / "queue-ring" / "jstack-l.txt"


def findings(path: Path, *codes: str) -> list[Finding]:
    return list(analyze(list(read_dumps(str(path))), select=list(codes or ["KD108"])).findings)


def test_two_stages_parked_putting_into_each_others_queues_are_one_ring() -> None:
    # GIVEN network-0 and handler-0 parked putting into the two queues of their channel
    # WHEN KD108 runs
    (finding,) = findings(RING)
    # THEN one finding names both, with the two different conditions they park on and the channel
    assert sorted(finding.threads) == ["handler-0", "network-0"]
    assert finding.severity is Severity.ERROR
    assert finding.details["channel"] == "com.example.RequestRingApp$Channel"
    queues = finding.details["queues"]
    assert len({queue["condition"] for queue in queues}) == 2
    assert {queue["caller"].rpartition(".")[2] for queue in queues} == {"sendRequest", "sendResponse"}
    assert "inferred from the channel" in finding.message


def test_a_thread_running_in_the_channel_may_be_taking_so_there_is_no_ring(tmp_path: Path) -> None:
    # GIVEN the same dump with a third thread running inside the channel (not parked)
    text = RING.read_text(encoding="utf-8")
    handler = thread_block(text, "handler-0")
    lines = handler.split("\n")
    channel_frame = next(i for i, line in enumerate(lines) if "RequestRingApp$Channel." in line)
    running = "\n".join(
        [
            lines[0].replace('"handler-0"', '"handler-1"').replace("nid=0x", "nid=0x1"),
            "   java.lang.Thread.State: RUNNABLE",
            *lines[channel_frame:],
        ]
    )
    path = tmp_path / "third.txt"
    path.write_text(text.replace(handler, handler + "\n\n" + running))
    # WHEN KD108 runs THEN it stays quiet: handler-1 may be the one that takes
    assert findings(path) == []


def test_producers_of_one_queue_are_not_a_ring(tmp_path: Path) -> None:
    # GIVEN two threads parked on the same condition (one full queue), and no thread on another
    text = RING.read_text(encoding="utf-8")
    network, handler = thread_block(text, "network-0"), thread_block(text, "handler-0")
    twin = network.replace('"network-0"', '"network-1"', 1).replace("nid=0x", "nid=0x1", 1)
    path = tmp_path / "one-queue.txt"
    path.write_text(text.replace(handler, twin))
    # WHEN KD108 runs THEN there is no ring: one full queue, which KD107 may report
    assert findings(path) == []


def test_kafka_702_handler_and_processor_are_named_as_one_ring_in_an_excerpt() -> None:
    # GIVEN KAFKA-702's excerpt: the processor parked putting a request, the handler a response
    path = WILD / "kafka-702-request-handler-processor-deadlock.txt"
    # WHEN every Java rule runs
    report = analyze(list(read_dumps(str(path))))
    # THEN KD108 names both as one ring, a warning because the input is an excerpt, and KD302 no
    # longer calls them poll threads
    (ring,) = [finding for finding in report.findings if finding.rule == "KD108"]
    assert sorted(ring.threads) == ["kafka-processor-10251-7", "kafka-request-handler-7"]
    assert ring.severity is Severity.WARNING and "excerpt" in ring.message
    assert ring.details["channel"] == "kafka.network.RequestChannel"
    assert not [finding for finding in report.findings if finding.rule == "KD302"]
