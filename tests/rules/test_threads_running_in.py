"""Which threads run in a class: one search of each stack for several classes at once must find
every class a stack runs in, also when frames of two of them are adjacent."""

from __future__ import annotations

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.javaframes import parse_java_frame
from kafkadiag.rules import stacks

from ..conftest import CAPTURED

PIPE = "com.example.RequestRingApp$Pipe"
CHANNEL = "com.example.RequestRingApp$Channel"


def test_adjacent_frames_of_two_classes_count_for_both() -> None:
    # GIVEN a real thread whose stack runs in one class right above a frame of another
    thread = next(read_dumps(str(CAPTURED / "queue-ring" / "jstack-l.txt"))).threads[0]
    bridge = thread._replace(
        frames=(
            parse_java_frame(f"{PIPE}.forward(RequestRingApp.java:50)"),
            parse_java_frame(f"{CHANNEL}.receiveRequest(RequestRingApp.java:40)"),
            parse_java_frame("java.lang.Thread.run(Thread.java:840)"),
        )
    )
    # WHEN both classes are searched at once
    found = stacks.threads_running_in([bridge], [PIPE, CHANNEL])
    # THEN the thread runs in each, as each class asked alone says
    assert found == {PIPE: [0], CHANNEL: [0]}
    assert stacks.runs_in_class(bridge, PIPE) and stacks.runs_in_class(bridge, CHANNEL)


def test_a_class_is_not_found_in_a_longer_name_or_a_package() -> None:
    thread = next(read_dumps(str(CAPTURED / "queue-ring" / "jstack-l.txt"))).threads[0]
    other = thread._replace(
        frames=(
            parse_java_frame("com.example.RequestRingApp$PipeLine.run(RequestRingApp.java:9)"),
            parse_java_frame("com.example.RequestRingApp$Channel.x.run(RequestRingApp.java:9)"),
        )
    )
    assert stacks.threads_running_in([other], [PIPE, CHANNEL]) == {PIPE: [], CHANNEL: []}
