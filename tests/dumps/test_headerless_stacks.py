"""Stacks pasted without their thread header: an excerpt that starts at the state line, or a
header cut from between two stacks. Each is a thread of its own, named by where it starts, and
the caveat says what the text lacks; a state line after a stack never merges two threads."""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.excerpts import headerless_name
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED
from ..rules.test_real_kafka_captures import fetcher_of
from .test_excerpts import thread_blocks

# Apache Kafka 0.8.2.2's real stalled consumer; its fetcher's name holds the capture's consumer id.
STALL = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt"
FETCHER = fetcher_of("real-old-consumer-stall-0.8.2.2")


def without_header(block: str) -> str:
    return block.split("\n", 1)[1]


def test_a_stack_copied_from_its_state_line_is_a_thread(tmp_path: Path) -> None:
    # GIVEN the blocked fetcher's stack, copied from its state line on, in a bug report
    dump, blocks = thread_blocks(STALL)
    original = next(thread for thread in dump.threads if thread.name == FETCHER)
    pasted = tmp_path / "report.txt"
    pasted.write_text("The fetcher is stuck here:\n\n" + without_header(blocks[FETCHER]) + "\n")
    # WHEN it is read
    (read,) = list(read_dumps(str(pasted)))
    # THEN it is one thread with the captured state, frames and lock lines, named by its line
    (thread,) = read.threads
    assert thread.name == headerless_name(3)
    assert (thread.state, thread.status) == (original.state, original.status)
    assert thread.frames == original.frames
    assert [(e.kind, e.lock_id) for e in thread.lock_events] == [
        (e.kind, e.lock_id) for e in original.lock_events
    ]
    assert any("without their thread header" in note for note in read.notes), read.notes


def test_a_header_cut_from_between_two_stacks_leaves_two_threads(tmp_path: Path) -> None:
    # GIVEN two stream threads' stacks where the second one's header was cut out
    dump, blocks = thread_blocks(STALL)
    pasted = tmp_path / "report.txt"
    first_name, second_name = "order-worker-orders", "order-worker-payments"
    pasted.write_text(blocks[first_name] + "\n" + without_header(blocks[second_name]) + "\n")
    (read,) = list(read_dumps(str(pasted)))
    # THEN the second stack is not added to the first thread: two threads, each with its own
    originals = {thread.name: thread for thread in dump.threads}
    first, second = read.threads
    assert first.name == first_name and first.frames == originals[first_name].frames
    assert second.name.startswith("(no header") and second.frames == originals[second_name].frames
    assert second.state == originals[second_name].state


def test_the_fetcher_stall_is_still_found_without_the_fetchers_header(tmp_path: Path) -> None:
    # GIVEN the whole stalled dump with the fetcher's header line deleted
    text = STALL.read_text(encoding="utf-8")
    header = next(line for line in text.split("\n") if line.startswith(f'"{FETCHER}"'))
    pasted = tmp_path / "stall.txt"
    pasted.write_text(text.replace(header + "\n", ""))
    (read,) = list(read_dumps(str(pasted)))
    # THEN the fetcher, under its stand-in name, is still the putter the finding names
    findings = analyze([read]).findings
    blocked_put = [finding for finding in findings if finding.rule == "KD201"]
    assert blocked_put, [finding.rule for finding in findings]
    assert any(name.startswith("(no header") for name in blocked_put[0].threads), blocked_put[0].threads
