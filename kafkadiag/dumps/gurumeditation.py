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
from kafkadiag.dumps.linefeed import feed_lines, numbered_lines
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
    return feed_lines(_ReportReader(source), numbered_lines(batches))


class _ReportReader:
    """Guru Meditation Reports, read line by line: their sections, and the stacks of two of them."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.dump: PythonDump | None = None
        self.count = 0
        self.section = ""
        self.green = 0
        # The thread being read: (name, header, line number), its frames outermost first, and the
        # source line of each frame (for the innermost one's blocking call).
        self.thread: tuple[str, str, int] | None = None
        self.frames: list[tuple[Frame, int]] = []
        self.sources: list[str | None] = []

    def _close_thread(self) -> None:
        if self.thread is not None and self.dump is not None:
            name, header, header_line_no = self.thread
            innermost_first = list(reversed(self.frames))
            self.dump.threads.append(
                python_thread(
                    name,
                    header,
                    header_line_no,
                    [frame for frame, _ in innermost_first],
                    top_source=self.sources[-1] if self.sources else None,
                    frame_line_nos=tuple(number for _, number in innermost_first),
                )
            )
        self.thread = None
        self.frames.clear()
        self.sources.clear()

    def _new_dump(self, line_no: int) -> PythonDump:
        self.dump = PythonDump(self.source, self.count, line_no, DumpFormat.GURU_MEDITATION, "oslo.reports")
        self.count += 1
        return self.dump

    def finish(self) -> ThreadDump | None:
        self._close_thread()
        return self.dump.build() if self.dump is not None else None

    def feed(self, line_no: int, line: str) -> ThreadDump | None:
        """Read one line; return the report it ends, if it ends one."""
        if BANNER.match(line):
            ended = self.finish()
            self._new_dump(line_no).banner = "Guru Meditation"
            self.section, self.green = "", 0
            return ended
        if self.dump is None and THREAD.match(line):
            # Only the stacks were kept (a reply quoting the Green Threads section): a dump
            # without the report's banner.
            self._new_dump(line_no)
            self.section, self.green = "Threads" if "#" in line else "Green Threads", 0
        dump = self.dump
        if dump is None or not line.strip() or RULE.match(line):
            return None
        dump.end_line_no = line_no
        heading = SECTION.match(line)
        if heading is not None:
            self._close_thread()
            self.section = heading["section"]
        elif self.section in STACK_SECTIONS and not self._stack_line(dump, line_no, line):
            dump.unparsed.add(line_no, line)
        return None  # Package, Processes, Configuration: not stacks

    def _stack_line(self, dump: PythonDump, line_no: int, line: str) -> bool:
        """A thread's header, a frame, the source line under a frame, or a line saying nothing."""
        header = THREAD.match(line)
        if header is not None:
            self._close_thread()
            if header["ident"] is not None:
                name = f"Thread #{header['ident']}"
            else:
                self.green += 1
                name = f"Green Thread {self.green}"
                if self.green == 1:
                    dump.notes.append(NOTE_GREEN_NAMES)
            self.thread = (name, line.strip(), line_no)
            return True
        if self.thread is None:
            return False
        frame = FRAME.match(line)
        if frame is not None:
            text = line.strip()
            function = frame["function"]
            self.frames.append((python_frame(text, function, frame["file"], decimal(frame["line"])), line_no))
            self.sources.append(None)
            return True
        code = SOURCE.match(line)
        if code is not None and self.sources:
            self.sources[-1] = code["code"]
            return True
        return line.strip() in ("No Traceback!", "------------------------------------")
