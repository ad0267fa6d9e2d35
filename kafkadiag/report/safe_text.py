"""Text from outside (thread names, command lines, znode data) made safe for a terminal: control
characters (ESC and OSC sequences could retitle or clear the terminal, C1 controls, NUL) and the
bidirectional controls (U+202E shows what follows it reversed, CVE-2021-42574) are shown as escapes
instead of being sent. A lone surrogate (JSON's `"\\ud800"`, a file name that is not UTF-8)
cannot be encoded at all: it is shown as its escape too, rather than stopping the report."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TextIO

# The bidirectional controls: the embeddings and overrides, the isolates and the marks.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}\\ud800-\\udfff]")


def printable(text: str) -> str:
    """`text` with every control character but tab and newline as a visible \\xNN escape, and
    every bidirectional control and lone surrogate as \\uNNNN."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# json.dumps escapes the C0 controls (\u001b) but, writing UTF-8 (ensure_ascii=False), leaves DEL
# and the C1 controls raw; as \xNN they would make the document invalid JSON.
# A bidirectional control or a lone surrogate gets JSON's own escape: the same string to a JSON
# reader, not acted on by a terminal that shows the document, and encodable.
_JSON_RAW_CONTROL = re.compile(f"[\\x7f-\\x9f{_BIDI}\\ud800-\\udfff]")


def json_printable(text: str) -> str:
    """JSON text with DEL, the C1 controls, the bidirectional controls and lone surrogates as
    \\uNNNN escapes: the same string to a JSON reader, nothing a terminal acts on, nothing UTF-8
    cannot encode."""
    if text.isascii() and "\x7f" not in text:
        return text  # the usual case, told without scanning the text character by character
    return _JSON_RAW_CONTROL.sub(lambda match: f"\\u{ord(match.group(0)):04x}", text)


class ControlEscapingStream:
    """A text stream whose writes arrive with their control characters escaped: every report,
    whatever its format, may quote thread names, znode data or metric labels from outside, and
    only newline and tab are layout. A JSON report's escapes are JSON's (see json_printable)."""

    def __init__(self, stream: TextIO, as_json: bool = False) -> None:
        self._stream = stream
        self._escaped = json_printable if as_json else printable

    def write(self, text: str) -> int:
        return self._stream.write(self._escaped(text))

    def writelines(self, lines: Iterable[str]) -> None:
        # Not left to __getattr__: the wrapped stream's writelines would skip the escaping.
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
