"""The bounds every input is read within: size, expansion, line length, JSON document size.

Dumps come from wherever an incident left them: a support bundle's gzip, a pipe, a file someone
attached to a ticket. A 10 MB gzip of newlines expands to 10 GiB (45 minutes of parsing), a
1.2 MB one of a single `{...` line cost 3.1 GB of memory, a 40 MB one of thread headers 3 GB.
Every bound here is stated, far above what a real dump needs, and named in the error that
reaches it together with the option and the environment variable that raise it (docs/inputs.md):

    text read from one input, after decompression   1 GiB   --max-input-size   KAFKADIAG_MAX_INPUT_SIZE
    expansion of a gzip input                       100x    --max-expansion    KAFKADIAG_MAX_EXPANSION
    one line of text (longer ones are cut)          1 MiB   --max-line-length  KAFKADIAG_MAX_LINE_LENGTH
    one JSON document (py-spy --json, jcmd ...)     64 MiB  --max-json-size    KAFKADIAG_MAX_JSON_SIZE
    memory taken while one input is read            1 GiB   --max-memory       KAFKADIAG_MAX_MEMORY

The command-line options (kafkadiag/commands/input_bounds.py) set the environment variables, so
that the bounds reach every reader a command runs, the batch job's Spark workers included (they
inherit the driver's environment).
"""

from __future__ import annotations

import io
import os
import re
import select
import stat
from dataclasses import dataclass
from typing import Any, BinaryIO

from kafkadiag.errors import InputUnreadableError, UsageError

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30

# A log of kill -3 output holding thousands of dumps is hundreds of MB; 1 GiB of text is a minute
# of parsing at the usual rate, and every option above it is the user's own decision.
DEFAULT_MAX_INPUT_BYTES = 1 * GIB
# Real dumps compress 5 to 15 times, a log of one process's dumps about 55 times (gzip -9 of
# fixtures/captured/old-consumer-stall/kill3-50-dumps.log); a gzip of newlines 1,000 times.
DEFAULT_MAX_EXPANSION = 100
# Checked only once this much has been expanded: a small gzip of a very repetitive log (a few
# hundred KB of identical lines) is read, whatever its ratio, and the ratio is not judged on the
# first buffer gzip reads ahead.
EXPANSION_GRACE_BYTES = 16 * MIB
# No dump line comes close: the longest are SMR address lists and py-spy --locals reprs, which
# py-spy itself truncates. A longer line is garbage, cut so that it cannot become one huge string.
DEFAULT_MAX_LINE_CHARS = 1 * MIB
# A JSON dump is one document, often on one line: py-spy --json with --locals of a 10,000-thread
# process or Actuator's compact output are tens of MB. Parsed whole, it costs several times its
# size in objects: 64 MiB keeps that under a GiB.
DEFAULT_MAX_JSON_CHARS = 64 * MIB
# What reading one input may add to the process's resident memory. Real dumps take about their
# own size once parsed (a 200 MB log of 4,000 dumps held whole: 237 MB; 100,000 threads: 82 MB);
# text that is only thread headers takes five times its size (600 bytes a thread), so that the
# bounds on text alone let a 40 MB gzip of headers take 3 GB.
DEFAULT_MAX_MEMORY_BYTES = 1 * GIB

ENV_MAX_INPUT_SIZE = "KAFKADIAG_MAX_INPUT_SIZE"
ENV_MAX_EXPANSION = "KAFKADIAG_MAX_EXPANSION"
ENV_MAX_LINE_LENGTH = "KAFKADIAG_MAX_LINE_LENGTH"
ENV_MAX_JSON_SIZE = "KAFKADIAG_MAX_JSON_SIZE"
ENV_MAX_MEMORY = "KAFKADIAG_MAX_MEMORY"
ENV_VARIABLES = (
    ENV_MAX_INPUT_SIZE,
    ENV_MAX_EXPANSION,
    ENV_MAX_LINE_LENGTH,
    ENV_MAX_JSON_SIZE,
    ENV_MAX_MEMORY,
)

_UNITS = {"": 1, "b": 1, "k": KIB, "m": MIB, "g": GIB, "t": GIB * KIB}
_SIZE = re.compile(r"^\s*(?P<number>\d{1,15})\s*(?P<unit>[kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes from `1048576`, `512K`, `64MiB`, `1G`, `2GB` (binary multiples); ValueError otherwise."""
    match = _SIZE.match(str(text))
    if match is None:
        raise ValueError(f"{text!r} is not a size (examples: 512MiB, 4GiB, 1048576)")
    size = int(match["number"]) * _UNITS[match["unit"].lower()]
    if size <= 0:
        raise ValueError(f"{text!r} must be more than zero")
    return size


def parse_ratio(text: str) -> int:
    """A whole expansion factor such as `100` or `1000x`; ValueError otherwise."""
    stripped = str(text).strip().rstrip("xX").strip()
    if not stripped.isascii() or not stripped.isdigit() or len(stripped) > 9 or int(stripped) < 1:
        raise ValueError(f"{text!r} is not an expansion factor (examples: 100, 1000x)")
    return int(stripped)


def format_size(size: int) -> str:
    """`1 GiB`, `64 MiB`, `1.5 KiB`, `100 bytes`: how a bound is named in an error."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if size >= unit:
            return f"{size / unit:.4g} {name}"
    return f"{size} bytes"


@dataclass(frozen=True)
class ReadLimits:
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES
    max_expansion: int = DEFAULT_MAX_EXPANSION
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS
    max_json_chars: int = DEFAULT_MAX_JSON_CHARS
    max_memory_bytes: int = DEFAULT_MAX_MEMORY_BYTES

    @classmethod
    def from_environment(cls) -> ReadLimits:
        """The bounds as the environment (or the command line, through it) sets them. A value
        that does not parse is a usage error naming the variable, not a silent default."""
        return cls(
            max_input_bytes=_from_env(ENV_MAX_INPUT_SIZE, parse_size, DEFAULT_MAX_INPUT_BYTES),
            max_expansion=_from_env(ENV_MAX_EXPANSION, parse_ratio, DEFAULT_MAX_EXPANSION),
            max_line_chars=_from_env(ENV_MAX_LINE_LENGTH, parse_size, DEFAULT_MAX_LINE_CHARS),
            max_json_chars=_from_env(ENV_MAX_JSON_SIZE, parse_size, DEFAULT_MAX_JSON_CHARS),
            max_memory_bytes=_from_env(ENV_MAX_MEMORY, parse_size, DEFAULT_MAX_MEMORY_BYTES),
        )


def _from_env(name: str, parse: Any, default: int) -> int:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value: int = parse(text)
    except ValueError as error:
        raise UsageError(
            f"{name}: {error}", help_text=f"Unset {name} or set it to a size such as 2GiB."
        ) from None
    return value


# How long a FIFO that no writer has opened yet is waited for (`mkfifo f; kafkadiag dump analyze
# f & jstack PID > f` opens the writer after kafkadiag opened the reader).
FIFO_WRITER_WAIT_S = 10.0


def open_input(path: str, writer_wait_s: float = FIFO_WRITER_WAIT_S) -> BinaryIO:
    """`path` opened for reading without waiting for ever for a writer: open() of a FIFO that
    nobody opens for writing waits forever (a stray FIFO in a bundle, a record directory, a
    glob). Opened non-blocking, such a FIFO is given `writer_wait_s` for a writer to send
    something (or to close), then reads as empty; one with a writer (`<(jstack PID)`) is read
    as before. OSError as open() raises it."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if stat.S_ISFIFO(os.fstat(descriptor).st_mode):
            _wait_for_a_writer(descriptor, writer_wait_s)
            return io.BufferedReader(_PolledPipe(descriptor))
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


class _PolledPipe(io.RawIOBase):
    """A FIFO read without blocking in the kernel for long: a signal that arrives just before a
    blocking read() starts is never serviced while the read waits (Python runs its handlers
    between bytecodes), so SIGTERM left a process waiting on a quiet writer for ever. Each wait
    here is a poll() of at most half a second, between which the handlers run."""

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor
        self._poller = select.poll()
        self._poller.register(descriptor, select.POLLIN | select.POLLHUP)

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._descriptor

    def readinto(self, buffer: Any) -> int:
        while True:
            try:
                return os.readv(self._descriptor, [buffer])
            except BlockingIOError:
                self._poller.poll(500)

    def close(self) -> None:
        if not self.closed:
            os.close(self._descriptor)
        super().close()


def _wait_for_a_writer(descriptor: int, wait_s: float) -> None:
    """Until the FIFO has data or a writer that closed it, at most wait_s. Linux reports neither
    for a FIFO no writer has opened yet (a read of it would say end of file at once), and data,
    or the hang-up, as soon as one has written or gone; elsewhere poll() may answer at once,
    which is the earlier behaviour."""
    poller = select.poll()
    poller.register(descriptor, select.POLLIN | select.POLLHUP)
    poller.poll(max(wait_s, 0.0) * 1000)


class InputTooLargeError(InputUnreadableError):
    """An input past one of the bounds: the message names the bound, the help how to raise it."""

    def __init__(self, message: str, option: str, variable: str, example: str) -> None:
        # The option in the message too: batch's quarantine records keep the message alone.
        super().__init__(
            f"{message} ({option} raises the bound)",
            help_text=(
                f"If the input is what you meant to read, raise the bound with {option} {example} "
                f"(or {variable}={example}); docs/inputs.md lists every bound."
            ),
        )


class MemoryWatch:
    """The resident memory the process gained since reading one input began, checked as it is
    read: InputTooLargeError past `max_bytes`. Resident memory, not a count of objects: it is what
    runs a machine out of memory, whatever the parser keeps (threads, frames, a JSON document)."""

    def __init__(self, name: str, max_bytes: int) -> None:
        self._name = name
        self._max_bytes = max_bytes
        self._start = resident_bytes()

    def check(self) -> None:
        gained = resident_bytes() - self._start
        if gained > self._max_bytes:
            raise InputTooLargeError(
                f"{self._name}: reading it took more than {format_size(self._max_bytes)} of memory, "
                "the bound on one input (a dump of that many threads, or a log of that many dumps)",
                "--max-memory",
                ENV_MAX_MEMORY,
                format_size(self._max_bytes * 4).replace(" ", ""),
            )


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """This process's resident memory (Linux's /proc/self/statm); 0 where that cannot be read,
    which leaves the memory bound unchecked there."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return 0


def file_kind(mode: int) -> str:
    """What a file that is not regular is, for a message: "a FIFO", "a character device"."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((kind for test, kind in kinds if test(mode)), "not a regular file")
