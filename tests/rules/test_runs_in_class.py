"""Whether a thread runs in a class: a frame of the class or of one of its nested classes, found
also when it is next to a frame of another class, never in a longer name or a package."""

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
    # WHEN each class is asked for THEN the thread runs in both
    assert stacks.runs_in_class(bridge, PIPE) and stacks.runs_in_class(bridge, CHANNEL)


def test_a_class_is_not_found_in_a_longer_name_or_a_package() -> None:
    thread = next(read_dumps(str(CAPTURED / "queue-ring" / "jstack-l.txt"))).threads[0]
    other = thread._replace(
        frames=(
            parse_java_frame("com.example.RequestRingApp$PipeLine.run(RequestRingApp.java:9)"),
            parse_java_frame("com.example.RequestRingApp$Channel.x.run(RequestRingApp.java:9)"),
        )
    )
    assert not stacks.runs_in_class(other, PIPE) and not stacks.runs_in_class(other, CHANNEL)
