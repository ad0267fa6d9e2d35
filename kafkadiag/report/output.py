"""Where reports go: stdout, or a file written atomically (complete or not at all) with the
permissions a plain `> FILE` would give it: an existing file's mode, else 0666 less the umask."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import TextIO

from kafkadiag.errors import InputUnreadableError
from kafkadiag.report.safe_text import ControlEscapingStream


@contextlib.contextmanager
def report_stream(path: str | None, output_format: str = "text") -> Iterator[TextIO]:
    """Yield a text stream for the report; a file only appears once it is fully written.
    Control characters in what is written are escaped (kafkadiag.report.safe_text), as JSON
    escapes them when `output_format` is "json"."""
    as_json = output_format == "json"
    if path is None or path == "-":
        yield ControlEscapingStream(sys.stdout, as_json)  # type: ignore[misc]
        sys.stdout.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        handle, temporary = tempfile.mkstemp(prefix=".kafkadiag-", dir=directory)
    except OSError as error:
        raise InputUnreadableError(
            f"cannot write {path}: {error.strerror or error}",
            help_text="Choose a directory this user can write to, or leave out --output.",
        ) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            yield ControlEscapingStream(stream, as_json)  # type: ignore[misc]
        # mkstemp creates the file 0600; a report read by node_exporter or a CI agent running as
        # another user must get the mode the user's umask asks for.
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def current_umask() -> int:
    mask = os.umask(0)  # the only way to read it is to set it; restored at once
    os.umask(mask)
    return mask


def _mode_for(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~current_umask()
