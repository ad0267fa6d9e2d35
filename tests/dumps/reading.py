"""What a parse of a file yields, in the terms the pasted-form tests compare."""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps


def what_was_read(path: Path) -> list[tuple]:
    """Per thread: name, status, frames' functions and lock relations."""
    return [
        (
            thread.name,
            thread.status,
            tuple(frame.function for frame in thread.frames),
            tuple((event.kind, event.lock_id, event.lock_class) for event in thread.lock_events),
        )
        for dump in read_dumps(str(path))
        for thread in dump.threads
    ]
