"""A dump as an issue tracker renders it: lines padded to the page's width, long lines cut at a column.

KAFKA-914's excerpt went through such a rendering: every line is padded with spaces, and a header
longer than the column is cut inside its stack address ("... waiting on condition [0x00" |
"007f58316ae000]"), the rest on a line of its own without the log prefix the other lines carry.
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps

from ..conftest import CAPTURED

WILD = Path(__file__).resolve().parents[1] / "wild" / "dumps"


def _cut_headers_inside_their_address(text: str) -> str:
    """Cut every thread header five characters into its stack address, as a fixed column would."""
    lines = []
    for line in text.split("\n"):
        address = line.rfind("[0x")
        if line.startswith('"') and address > 0 and line.endswith("]"):
            lines += [line[: address + 5], line[address + 5 :]]
        else:
            lines.append(line)
    return "\n".join(lines)


def _threads(path: Path) -> list[tuple]:
    return [
        (thread.name, thread.nid, thread.status, tuple(frame.function for frame in thread.frames))
        for dump in read_dumps(str(path))
        for thread in dump.threads
    ]


def test_a_header_cut_inside_its_stack_address_is_one_header(tmp_path: Path) -> None:
    # GIVEN a captured dump whose headers were all cut inside their stack address
    original = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt"
    path = tmp_path / "cut.txt"
    path.write_text(_cut_headers_inside_their_address(original.read_text(encoding="utf-8")))
    # WHEN it is read
    dump = next(read_dumps(str(path)))
    # THEN every thread is read with its stack, and the repair is a caveat
    assert _threads(path) == _threads(original)
    assert all(thread.header.endswith("]") for thread in dump.threads if "[0x" in thread.header)
    assert any("cut by hard wrapping" in note for note in dump.notes)


def test_frames_padded_to_the_page_width_are_frames(tmp_path: Path) -> None:
    # GIVEN a captured dump with every line padded with spaces to 200 columns
    original = CAPTURED / "deadlock" / "jstack-l.txt"
    text = "\n".join(line.ljust(200) for line in original.read_text(encoding="utf-8").split("\n"))
    path = tmp_path / "padded.txt"
    path.write_text(text)
    # WHEN it is read
    # THEN the frames are read as they are without the padding
    assert _threads(path) == _threads(original)


def test_kafka_914_fetcher_is_read_with_its_stack() -> None:
    # GIVEN the KAFKA-914 excerpt: labelled, padded, headers cut by the tracker
    dump = next(read_dumps(str(WILD / "kafka-914-rebalance-fetcher-full-queue.txt")))
    # WHEN it is read
    fetcher = next(thread for thread in dump.threads if thread.name.startswith("ConsumerFetcherThread"))
    # THEN the fetcher has its whole stack, parked in the stream queue's put, and all four excerpts
    # are one dump
    assert [frame.function for frame in fetcher.frames[3:5]] == [
        "java.util.concurrent.LinkedBlockingQueue.put",
        "kafka.consumer.PartitionTopicInfo.enqueue",
    ]
    assert len(fetcher.frames) == 12 and fetcher.nid == 0x3920
    assert len(dump.threads) == 4
