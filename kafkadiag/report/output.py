"""Where reports go: stdout, or a file written atomically (complete or not at all) with the
permissions a plain `> FILE` would give it: an existing file's mode, else 0666 less the umask.

Only a regular file (or a new path) is replaced atomically. A FIFO or a character device
(`--output /dev/stdout`, `/proc/self/fd/1` of a pipe, `/dev/null`) is written straight into, as
the shell's `>` does: renaming a temporary file over it would put a regular file in its place,
and as root over `/dev/null` that is the system's own. Anything else (a directory, a socket, a
block device) is refused before a word is written. A write that fails (a full disk, stdout on
/dev/full) is an error naming the destination, not a traceback.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any, TextIO, cast

from kafkadiag.console import colour_on, width_of
from kafkadiag.errors import OutputUnwritableError, UsageError
from kafkadiag.readlimits import file_kind
from kafkadiag.report.safe_text import ControlEscapingStream
from kafkadiag.umask import current_umask

STDOUT_NAME = "<stdout>"


@contextlib.contextmanager
def report_stream(path: str | None, output_format: str = "as-is") -> Iterator[TextIO]:
    """Yield a text stream for the report; a file only appears once it is fully written.
    Control characters in what is written are escaped (kafkadiag.report.safe_text), as JSON
    escapes them when `output_format` is "json". A report for people ("table", "text") is laid
    out at the destination's width; any other (JUnit XML, Prometheus) is written as it is."""
    if path is None or path == "-":
        yield from _to_stdout(output_format)
        return
    kind = _special_kind(path)
    if kind in _WRITTEN_STRAIGHT:
        yield from _straight_into(path, output_format)
    elif kind is None:
        yield from _atomically(path, output_format)
    else:
        raise UsageError(
            f"cannot write the report to {path}: it is {kind}, not a file",
            help_text="Name a file (a new one, or one to replace), or leave out the option to print "
            "the report on stdout.",
        )


_WRITTEN_STRAIGHT = ("a FIFO", "a character device")


def _special_kind(path: str) -> str | None:
    """What `path` is when it is not a regular file or absent (None): followed through links,
    as the shell's `>` follows them."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # absent (or a dangling link, whose target is created), or unreachable: said on open
    return None if stat.S_ISREG(mode) else file_kind(mode)


def _to_stdout(output_format: str) -> Iterator[TextIO]:
    # A reader that leaves (`| head -1`) ends the report, not the command: the rest goes nowhere
    # and the command still returns the exit code of what it found, so that a `pipefail` script
    # sees exit 1 for a finding whether or not its reader read to the end.
    try:
        with _report_on(sys.stdout, STDOUT_NAME, output_format) as report:
            yield report
    except BrokenPipeError:
        _discard_stdout()
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _discard_stdout()
    except OSError as error:
        _discard_stdout()
        raise _unwritable(STDOUT_NAME, error) from None


def _discard_stdout() -> None:
    """What stdout still buffers goes to /dev/null, so that the flush at exit does not fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _straight_into(path: str, output_format: str) -> Iterator[TextIO]:
    """A FIFO or a device: opened for writing as it is (a FIFO waits for its reader)."""
    try:
        stream = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by _closed_checked
    except OSError as error:
        raise _unwritable(path, error) from None
    with _closed_checked(stream, path), _report_on(stream, path, output_format) as report:
        yield report


def _atomically(path: str, output_format: str) -> Iterator[TextIO]:
    # Through a link, its target is replaced: the link stays a link, as with `>`.
    target = os.path.realpath(path)
    try:
        handle, temporary = tempfile.mkstemp(prefix=".kafkadiag-", dir=os.path.dirname(target))
    except OSError as error:
        raise OutputUnwritableError(
            f"cannot write {path}: {error.strerror or error}",
            # Not "leave out --output": the path may be --junit-xml's, whose report has no stdout.
            help_text="Name a file in an existing directory this user can write to.",
        ) from None
    stream = os.fdopen(handle, "w", encoding="utf-8")
    try:
        with _closed_checked(stream, path), _report_on(stream, path, output_format) as report:
            yield report
        # mkstemp creates the file 0600; a report read by node_exporter or a CI agent running as
        # another user must get the mode the user's umask asks for.
        try:
            os.chmod(temporary, _mode_for(target))
            os.replace(temporary, target)
        except OSError as error:
            raise _unwritable(path, error) from None
    except BaseException:  # an error, Ctrl-C or SIGTERM while writing: no partial report, no leftover
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def _closed_checked(stream: TextIO, name: str) -> Iterator[None]:
    """Close `stream` after the body; its last flush failing (a full disk) is an error naming
    `name`, unless the body failed first (that error is the one to tell)."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            stream.close()
        raise
    try:
        stream.close()
    except OSError as error:
        raise _unwritable(name, error) from None


@contextlib.contextmanager
def _report_on(stream: TextIO, name: str, output_format: str) -> Iterator[TextIO]:
    """The report's stream over `stream`, its last line written when the report is done."""
    checked = cast(TextIO, _Checked(stream, name))
    report = ReportStream(checked, output_format, width_of(stream), colour_on(stream))
    yield report  # type: ignore[misc]
    report.finish()


# The formats people read at a terminal: laid out at its width, coloured, folded.
FOR_PEOPLE = ("table", "text")


class ReportStream(ControlEscapingStream):
    """A report's stream: writes are escaped (ControlEscapingStream); `width` is the columns the
    report is laid out in and `colour` whether it is coloured (kafkadiag.console decides both
    from the destination: a terminal, a pipe, a file).

    Text for people that arrives wider than `width` (a line a renderer does not lay out itself:
    a problem, a note, an evidence line) is folded at its spaces, its continuation indented under
    it; the renderers that lay out at the width (texttable, textpage) write lines that fit."""

    def __init__(self, stream: TextIO, output_format: str, width: int, colour: bool) -> None:
        super().__init__(stream, output_format == "json")
        self.width = width
        self.colour = colour and output_format in FOR_PEOPLE
        self._raw = stream
        self._folds = output_format in FOR_PEOPLE
        self._pending = ""

    def write(self, text: str) -> int:
        if not self._folds:
            return super().write(text)
        self._pending += text
        if "\n" not in text:
            return len(text)
        lines = self._pending.split("\n")
        self._pending = lines.pop()
        width = self.width
        super().write("".join(line + "\n" if len(line) <= width else _folded(line, width) for line in lines))
        return len(text)

    def write_raw(self, text: str) -> int:
        """Write `text` as it is: its outside parts already escaped (printable) by the caller,
        its colour codes (SGR sequences) meant for the terminal; its lines already fit."""
        self.finish()
        return self._raw.write(text)

    def finish(self) -> None:
        """Write what is left of a last line without a newline."""
        if self._pending:
            pending, self._pending = self._pending, ""
            super().write(
                pending if len(pending) <= self.width else _folded(pending, self.width).rstrip("\n")
            )


def _folded(line: str, width: int) -> str:
    from kafkadiag.report.textpage import wrap_plain

    indent = len(line) - len(line.lstrip(" "))
    return wrap_plain(line, width, " " * (indent + 2), first=" " * indent) + "\n"


class _Checked:
    """A text stream whose failed writes say which destination failed and why (ENOSPC, EFBIG,
    EIO) as an OutputUnwritableError; a reader that left (BrokenPipeError) is passed on as is."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self._stream = stream
        self._name = name

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise _unwritable(self._name, error) from None

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise _unwritable(self._name, error) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _unwritable(name: str, error: OSError) -> OutputUnwritableError:
    return OutputUnwritableError(f"cannot write the report to {name}: {error.strerror or error}")


def _mode_for(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~current_umask()
