"""oslo.reports' Guru Meditation Report: how OpenStack services (monasca's Kafka persister and
notifier among them) print their stacks on SIGUSR2.

    ========================================================================
    ====                        Guru Meditation                         ====
    ========================================================================
    ...
    ====                            Threads                             ====
    ========================================================================
    ------                  Thread #140066684836736                   ------

    /usr/lib/python3/dist-packages/eventlet/hubs/hub.py:362 in run
        `self.wait(sleep_time)`
    ...
    ====                         Green Threads                          ====
    ========================================================================
    ------                        Green Thread                        ------

    /srv/persister/consumer.py:54 in poll_loop
        `records.put(record)`

Each stack is `traceback.extract_stack()` rendered outermost first, a frame per
`file:line in function` line with its source line (or "(source not found)") under it. OS threads
are named by their ident; green threads have no name in the report and are numbered in the order
it lists them. The other sections (Package, Processes, Configuration) are not stacks and are
passed over. A file holding several reports (a service's log) holds several dumps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import decimal
from kafkadiag.dumps.pythreads import PythonDump, python_frame, python_thread
from kafkadiag.model import DumpFormat, Frame, ThreadDump

BANNER = re.compile(r"^====\s+Guru Meditation\s+====\s*$")
SECTION = re.compile(r"^====\s+(?P<section>\S.*?)\s+====\s*$")
RULE = re.compile(r"^(?:={10,}|\|{10,})\s*$")
THREAD = re.compile(r"^------\s+(?P<title>Thread #(?P<ident>\d+)|Green Thread)\s+------\s*$")
FRAME = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+) in (?P<function>\S+)\s*$")
SOURCE = re.compile(r"^\s+(?:`(?P<code>.*)`|\(source not found\))\s*$")
STACK_SECTIONS = frozenset({"Threads", "Green Threads"})

NOTE_GREEN_NAMES = (
    "green threads have no names in a Guru Meditation Report: they are numbered in the order the "
    "report lists them ('Green Thread 1', ...)"
)


def parse_guru_meditation(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    dump: PythonDump | None = None
    count = 0
    section = ""
    green = 0
    # The thread being read: (name, header, line number), its frames outermost first, and the
    # source line of each frame (for the innermost one's blocking call).
    thread: tuple[str, str, int] | None = None
    frames: list[tuple[Frame, int]] = []
    sources: list[str | None] = []
    line_no = 0

    def close_thread() -> None:
        nonlocal thread
        if thread is not None and dump is not None:
            name, header, header_line_no = thread
            innermost_first = list(reversed(frames))
            dump.threads.append(
                python_thread(
                    name,
                    header,
                    header_line_no,
                    [frame for frame, _ in innermost_first],
                    top_source=sources[-1] if sources else None,
                    frame_line_nos=tuple(number for _, number in innermost_first),
                )
            )
        thread = None
        frames.clear()
        sources.clear()

    for batch in batches:
        for line in batch:
            line_no += 1
            if BANNER.match(line):
                close_thread()
                if dump is not None:
                    yield dump.build()
                dump = PythonDump(source, count, line_no, DumpFormat.GURU_MEDITATION, "oslo.reports")
                dump.banner = "Guru Meditation"
                count += 1
                section, green = "", 0
                continue
            if dump is None and THREAD.match(line):
                # Only the stacks were kept (a reply quoting the Green Threads section): a dump
                # without the report's banner.
                dump = PythonDump(source, count, line_no, DumpFormat.GURU_MEDITATION, "oslo.reports")
                count += 1
                section, green = "Threads" if "#" in line else "Green Threads", 0
            if dump is None or not line.strip() or RULE.match(line):
                continue
            dump.end_line_no = line_no
            heading = SECTION.match(line)
            if heading is not None:
                close_thread()
                section = heading["section"]
                continue
            if section not in STACK_SECTIONS:
                continue  # Package, Processes, Configuration: not stacks
            header = THREAD.match(line)
            if header is not None:
                close_thread()
                if header["ident"] is not None:
                    name = f"Thread #{header['ident']}"
                else:
                    green += 1
                    name = f"Green Thread {green}"
                    if green == 1:
                        dump.notes.append(NOTE_GREEN_NAMES)
                thread = (name, line.strip(), line_no)
                continue
            frame = FRAME.match(line)
            if thread is not None and frame is not None:
                text = line.strip()
                function = frame["function"]
                frames.append((python_frame(text, function, frame["file"], decimal(frame["line"])), line_no))
                sources.append(None)
                continue
            code = SOURCE.match(line)
            if thread is not None and code is not None and sources:
                sources[-1] = code["code"]
                continue
            if thread is not None and line.strip() in (
                "No Traceback!",
                "------------------------------------",
            ):
                continue
            dump.unparsed.add(line_no, line)
    close_thread()
    if dump is not None:
        yield dump.build()
