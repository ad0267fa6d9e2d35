"""Text from outside (thread names, command lines, znode data) made safe for a terminal: control
characters (ESC and OSC sequences could retitle or clear the terminal, C1 controls, NUL) are shown
as escapes instead of being sent."""

from __future__ import annotations

import re
from typing import Any, TextIO

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with every control character but tab and newline as a visible \\xNN escape."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group(0)):02x}", text)


class ControlEscapingStream:
    """A text stream whose writes arrive with their control characters escaped: every report,
    whatever its format, may quote thread names, znode data or metric labels from outside, and
    only newline and tab are layout. JSON is unchanged by it (json.dumps escapes controls)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(printable(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
