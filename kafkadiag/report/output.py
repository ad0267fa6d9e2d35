"""Where reports go: stdout, or a file written atomically (complete or not at all)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import TextIO

from kafkadiag.errors import InputUnreadableError


@contextlib.contextmanager
def report_stream(path: str | None) -> Iterator[TextIO]:
    """Yield a text stream for the report; a file only appears once it is fully written."""
    if path is None or path == "-":
        yield sys.stdout
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
            yield stream
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
