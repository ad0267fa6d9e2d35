"""Excerpts of a real dump, annotated as people annotate them, are one dump; what they leave out is said.

The excerpts are cut from captured dumps by thread: a person pastes the threads that matter, with
prose, "[snip]" and "<--- here" between and after them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import Thread, ThreadDump
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED


def thread_blocks(path: Path) -> tuple[ThreadDump, dict[str, str]]:
    """The dump and, per thread name, its block of lines as printed (header to the last line)."""
    dump = next(read_dumps(str(path)))
    lines = path.read_text(encoding="utf-8").split("\n")
    starts = [thread.line_no for thread in dump.threads] + [dump.end_line_no + 1]
    blocks = {}
    for thread, end in zip(dump.threads, starts[1:]):
        block = lines[thread.line_no - 1 : end - 1]
        while block and (not block[-1].strip() or block[-1].startswith(("JNI", "Found"))):
            block.pop()
        blocks[thread.name] = "\n".join(block)
    return dump, blocks


def annotate(block: str, marker: str) -> str:
    """Put an arrow after the first line holding `marker`, as people point at the culprit."""
    lines = block.split("\n")
    for index, line in enumerate(lines):
        if marker in line:
            lines[index] = line + "   <--- here"
            break
    return "\n".join(lines)


def test_a_deadlock_pasted_as_annotated_excerpts_is_still_a_lock_cycle(tmp_path: Path) -> None:
    # GIVEN the two threads of a monitor deadlock, pasted apart with prose and an arrow
    _, blocks = thread_blocks(CAPTURED / "deadlock" / "jstack-l.txt")
    text = (
        "The app hangs on startup. First thread:\n\n"
        + annotate(blocks["deadlock-monitor-A"], "waiting to lock")
        + "\n\n[snip]\n\nand the other one, a few hundred lines further down:\n\n"
        + blocks["deadlock-monitor-B"]
        + "\n\nAny idea?\n"
    )
    path = tmp_path / "excerpts.txt"
    path.write_text(text)
    # WHEN it is read and analysed
    dumps = list(read_dumps(str(path)))
    report = analyze(dumps)
    # THEN it is one dump of the two threads, the cycle is found, and the excerpts are a caveat
    assert len(dumps) == 1
    assert [thread.name for thread in dumps[0].threads] == ["deadlock-monitor-A", "deadlock-monitor-B"]
    cycles = [finding for finding in report.findings if finding.rule == "KD102"]
    assert [sorted(finding.threads) for finding in cycles] == [["deadlock-monitor-A", "deadlock-monitor-B"]]
    assert any("excerpts: 2 parts" in caveat for caveat in report.caveats)


def test_a_waiter_pasted_without_the_lock_holder_names_the_owner_as_missing(tmp_path: Path) -> None:
    # GIVEN one of the threads blocked on the hot lock, without the thread that holds it
    _, blocks = thread_blocks(CAPTURED / "lock-contention" / "jstack-l.txt")
    path = tmp_path / "waiter.txt"
    path.write_text("One of the request threads:\n" + blocks["request-3"] + "\n(the others look the same)\n")
    # WHEN it is analysed through the CLI, for a machine
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "analyze", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    # THEN the lock it waits for is reported with its owner not in the dump, not silently dropped
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    missing = [caveat for caveat in report["caveats"] if "owner not in the dump" in caveat]
    assert len(missing) == 1 and "awaited by request-3" in missing[0]
    assert report["verdict"].startswith("No stall found in what could be read")


def test_the_owner_in_another_excerpt_is_not_reported_missing(tmp_path: Path) -> None:
    _, blocks = thread_blocks(CAPTURED / "lock-contention" / "jstack-l.txt")
    path = tmp_path / "both.txt"
    path.write_text(blocks["request-3"] + "\n\n--- and the holder ---\n\n" + blocks["cache-refresher"] + "\n")
    report = analyze(list(read_dumps(str(path))))
    assert not [caveat for caveat in report.caveats if "owner not in the dump" in caveat]


def test_repeated_snapshots_of_the_same_threads_stay_separate_dumps(tmp_path: Path) -> None:
    # GIVEN an application log with every thread's ThreadInfo printed twice, log lines between
    log = (CAPTURED / "threadinfo-deadlock" / "threadinfo.log").read_text(encoding="utf-8")
    path = tmp_path / "twice.log"
    path.write_text(log + "10:00:01 INFO still waiting\n" + log)
    dumps = list(read_dumps(str(path)))
    # THEN each snapshot is a dump of its own (a thread repeating means a new snapshot)
    assert len(dumps) == 2
    assert [dump.index for dump in dumps] == [0, 1]
    names: list[list[str]] = [[thread.name for thread in dump.threads] for dump in dumps]
    assert names[0] == names[1]


def test_equally_named_threads_in_two_excerpts_are_two_threads(tmp_path: Path) -> None:
    # Pool threads of one name are told apart by nid: excerpts holding two of them still join.
    dump, _ = thread_blocks(CAPTURED / "lock-contention" / "jstack-l.txt")
    lines = (CAPTURED / "lock-contention" / "jstack-l.txt").read_text(encoding="utf-8").split("\n")
    first, second = (_renamed_block(lines, dump, name, "request") for name in ("request-1", "request-2"))
    path = tmp_path / "same-name.txt"
    path.write_text(first + "\n\n[...]\n\n" + second + "\n")
    dumps = list(read_dumps(str(path)))
    assert len(dumps) == 1 and [t.name for t in dumps[0].threads] == ["request", "request"]


def _renamed_block(lines: list[str], dump: ThreadDump, name: str, new_name: str) -> str:
    thread: Thread = next(t for t in dump.threads if t.name == name)
    block = lines[thread.line_no - 1 : thread.line_no + len(thread.frames) + len(thread.lock_events) + 1]
    block[0] = block[0].replace(f'"{name}"', f'"{new_name}"', 1)
    return "\n".join(block)


def test_numbered_labels_between_excerpts_are_annotations_not_text(tmp_path: Path) -> None:
    # GIVEN the two threads of a monitor deadlock, each under a reporter's label, as KAFKA-916 pastes
    _, blocks = thread_blocks(CAPTURED / "deadlock" / "jstack-l.txt")
    path = tmp_path / "labelled.txt"
    path.write_text(
        "[t1]\n" + blocks["deadlock-monitor-A"] + "\n\n[t2]\n\n" + blocks["deadlock-monitor-B"] + "\n"
    )
    # WHEN it is read and analysed
    dumps = list(read_dumps(str(path)))
    report = analyze(dumps)
    # THEN the labels neither split the excerpt nor are kept as text the parser did not understand
    assert len(dumps) == 1 and not dumps[0].unparsed
    assert [thread.name for thread in dumps[0].threads] == ["deadlock-monitor-A", "deadlock-monitor-B"]
    assert not [note for note in dumps[0].notes if note.startswith("excerpts:")]
    cycles = [finding for finding in report.findings if finding.rule == "KD102"]
    assert [sorted(finding.threads) for finding in cycles] == [["deadlock-monitor-A", "deadlock-monitor-B"]]


def test_a_label_after_a_cut_frame_is_not_joined_to_it(tmp_path: Path) -> None:
    # GIVEN an excerpt whose last frame was cut short (a paste that lost its end), then a label
    _, blocks = thread_blocks(CAPTURED / "deadlock" / "jstack-l.txt")
    lines = blocks["deadlock-monitor-A"].split("\n")
    last = max(i for i, line in enumerate(lines) if line.startswith("\tat "))
    # "...(Thread.java:840)" -> "...(Thread.java", and nothing after it
    cut = "\n".join([*lines[:last], lines[last][: lines[last].rindex(":")]])
    path = tmp_path / "cut.txt"
    path.write_text(cut + "\n[t2]\n" + blocks["deadlock-monitor-B"] + "\n")
    # WHEN it is read
    dump = next(read_dumps(str(path)))
    # THEN the label is not read as the rest of the frame
    last_frame = dump.threads[0].frames[-1]
    assert "[t2]" not in last_frame.text and last_frame.text.endswith(".java")
    assert [thread.name for thread in dump.threads] == ["deadlock-monitor-A", "deadlock-monitor-B"]


def test_excerpts_count_their_rejoined_lines_in_one_caveat(tmp_path: Path) -> None:
    # GIVEN two excerpts separated by prose, each with a frame cut in two by hard wrapping
    _, blocks = thread_blocks(CAPTURED / "deadlock" / "jstack-l.txt")
    wrapped = [_wrap_first_frame(blocks[name]) for name in ("deadlock-monitor-A", "deadlock-monitor-B")]
    path = tmp_path / "wrapped-excerpts.txt"
    path.write_text(wrapped[0] + "\n\nThe other thread:\n\n" + wrapped[1] + "\n")
    # WHEN they are read as one dump
    dumps = list(read_dumps(str(path)))
    # THEN one caveat counts both rejoined lines, instead of one caveat per excerpt
    assert len(dumps) == 1
    rejoined = [note for note in dumps[0].notes if "cut by hard wrapping" in note]
    assert rejoined == [
        "2 line(s) cut by hard wrapping (a mail client, an issue tracker) were joined back to the line before"
    ]


def _wrap_first_frame(block: str) -> str:
    lines = block.split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith("\tat "))
    middle = len(lines[index]) // 2
    lines[index : index + 1] = [lines[index][:middle], lines[index][middle:]]
    return "\n".join(lines)


def test_a_threadinfo_header_names_the_holder_whose_stack_was_cut(tmp_path: Path) -> None:
    # GIVEN the ThreadInfo deadlock with ti-deadlock-B's stack cut above its "- locked" line, as
    # reporters cut stacks: only A's header ('BLOCKED on X@a09ee92 owned by "ti-deadlock-B" Id=13')
    # still says who holds that ledger
    log = (CAPTURED / "threadinfo-deadlock" / "threadinfo.log").read_text(encoding="utf-8")
    held_by_b = "\t-  locked com.example.ThreadInfoDeadlock$Ledger@a09ee92\n"
    assert held_by_b in log
    path = tmp_path / "cut.log"
    path.write_text(log.replace(held_by_b, ""))
    # WHEN it is read
    (dump,) = read_dumps(str(path))
    # THEN B holds the ledger all the same, and the cycle between A and B is whole
    b = next(thread for thread in dump.threads if thread.name == "ti-deadlock-B")
    assert 0xA09EE92 in {lock.lock_id for lock in b.held_locks()}
    cycles = LockGraph(dump).cycles()
    assert [sorted(dump.threads[index].name for index in cycle) for cycle in cycles] == [
        ["ti-deadlock-A", "ti-deadlock-B"]
    ]


def test_excerpts_of_two_jvms_stay_two_dumps(tmp_path: Path) -> None:
    # GIVEN a page comparing two runs: an excerpt of each JVM, "main" and a worker from both, prose
    # between them (each JVM has one "main"; two of them cannot be one dump)
    _, ledger = thread_blocks(CAPTURED / "real-producer-callback-deadlock-4.1.1" / "jstack-l.txt")
    _, reports = thread_blocks(CAPTURED / "real-new-consumer-close-hang-4.1.1" / "jstack-l.txt")
    first = ledger["main"] + "\n\n" + ledger["ledger-closer"]
    second = reports["main"] + "\n\n" + reports["fulfilment-poll"]
    path = tmp_path / "two-runs.txt"
    path.write_text(first + "\n\nThe next day, after the upgrade:\n\n" + second + "\n")
    # WHEN it is read THEN each excerpt is a dump of its own, and a lone excerpt is still joined
    dumps = list(read_dumps(str(path)))
    assert [[thread.name for thread in dump.threads] for dump in dumps] == [
        ["main", "ledger-closer"],
        ["main", "fulfilment-poll"],
    ]
    without_main = tmp_path / "one-run.txt"
    without_main.write_text(first + "\n\n[snip]\n\n" + reports["fulfilment-poll"] + "\n")
    assert len(list(read_dumps(str(without_main)))) == 1


def grep_after_headers(text: str, after: int) -> str:
    """What `grep -A AFTER '^"'` prints of a dump: each header and the lines after it, with a
    '--' line where a group does not run on into the next."""
    lines = text.split("\n")
    keep = sorted({i + k for i, line in enumerate(lines) if line.startswith('"') for k in range(after + 1)})
    keep = [i for i in keep if i < len(lines)]
    out: list[str] = []
    for previous, current in zip([None, *keep], keep):
        if previous is not None and current != previous + 1:
            out.append("--")
        out.append(lines[current])
    return "\n".join(out) + "\n"


def test_grep_output_is_one_excerpt_that_says_stacks_may_be_cut(tmp_path: Path) -> None:
    # GIVEN the stalled old consumer's dump as `jstack PID | grep -A N '^"'` prints it
    original = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt"
    (whole,) = list(read_dumps(str(original)))
    text = original.read_text(encoding="utf-8")
    for after, stall_seen in ((8, False), (40, True)):
        grepped = tmp_path / f"grep-A{after}.txt"
        output = grep_after_headers(text, after)
        grepped.write_text(output, encoding="utf-8")
        # WHEN it is read
        (dump,) = list(read_dumps(str(grepped)))
        # THEN every thread is there, one dump, and where grep cut groups the caveat says so
        assert [t.name for t in dump.threads] == [t.name for t in whole.threads]
        cut = "\n--\n" in output
        assert any(note.startswith("grep -A/-B/-C output") for note in dump.notes) is cut, dump.notes
        # and where grep kept the whole stacks, the stall is found as in the whole dump
        rules = {finding.rule for finding in analyze([dump]).findings}
        assert ("KD201" in rules) is stall_seen, (after, rules)
