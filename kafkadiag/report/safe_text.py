"""Text from outside (thread names, command lines, znode data) made safe for a terminal: control
characters (ESC and OSC sequences could retitle or clear the terminal, C1 controls, NUL) are shown
as escapes instead of being sent."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with every control character but tab and newline as a visible \\xNN escape."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group(0)):02x}", text)
