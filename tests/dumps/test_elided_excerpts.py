"""A pasted excerpt with "..." where the reporter left threads out is still one dump.

A banner-less fragment ends at the first line that is not part of a dump (so that ThreadInfo text
logged at different times stays apart), but "..." and "[...]" are the reporter saying that more of
the same dump was there. KAFKA-1305's excerpt has four threads separated by "..." lines.
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps

KAFKA_1305 = (
    Path(__file__).resolve().parents[1] / "wild" / "dumps" / "kafka-1305-controller-shutdown-hang.txt"
)


def test_threads_separated_by_elision_lines_stay_in_one_dump() -> None:
    # GIVEN four threads of one dump, with "..." lines between them
    # WHEN the excerpt is read
    dumps = list(read_dumps(str(KAFKA_1305)))
    # THEN it is one dump holding all four, the elisions understood rather than kept as unparsed text
    assert len(dumps) == 1
    assert [thread.name for thread in dumps[0].threads] == [
        "Controller-265-to-broker-265-send-thread",
        "Thread-4",
        "kafka-scheduler-0",
        "ZkClient-EventThread-18-/kafka-shadow",
    ]
    assert not dumps[0].unparsed
