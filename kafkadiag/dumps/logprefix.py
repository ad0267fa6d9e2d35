"""Strip the per-line prefix that log pipelines put in front of kill -3 output.

A JVM's SIGQUIT dump goes to its stdout, and from there through whatever wraps it: a
container runtime ("2024-05-01T10:11:12.123456789Z stdout F "), syslog/journald
("May  1 10:11:12 host java[123]: "), an application server logging stdout
("10:11:12,345 INFO  [stdout] (Thread-9) "), or grep's context output ("dump.txt-", "dump.txt:"
before a matching line). Instead of a catalogue of such formats, the prefix
is learned from the first line that must start at column 0 (the banner or a thread header): its
digits may vary from line to line, bracketed parts may hold anything, runs of spaces may
stretch; the rest must match literally. A prefix of only spaces (four or more) or a tab is a
Markdown code block's indent, stripped exactly.
"""

from __future__ import annotations

import re

_DIGITS = re.compile(r"\d+")


def generalise(prefix: str) -> str:
    """Turn one observed prefix into a pattern that matches its siblings on other lines."""
    pattern: list[str] = []
    position = 0
    length = len(prefix)
    while position < length:
        char = prefix[position]
        if "0" <= char <= "9":  # str.isdigit would take a superscript, which `\d` does not match
            end = _DIGITS.match(prefix, position).end()  # type: ignore[union-attr]
            pattern.append(r"\d+")
            position = end
        elif char in "[(":
            closing = "]" if char == "[" else ")"
            end = prefix.find(closing, position)
            if end < 0:
                pattern.append(re.escape(char))
                position += 1
            else:
                pattern.append(re.escape(char) + "[^" + re.escape(closing) + "]*" + re.escape(closing))
                position = end + 1
        elif char in "-:":
            # grep -A/-B/-C names the file before every line it prints, "file:" before a
            # matching line and "file-" before a line of context (with -n, "file:12:").
            pattern.append("[-:]")
            position += 1
        elif char.isspace():
            while position < length and prefix[position].isspace():
                position += 1
            pattern.append(r"\s+" if position < length else r"\s?")
        else:
            pattern.append(re.escape(char))
            position += 1
    return "".join(pattern)


def _is_code_block_indent(prefix: str) -> bool:
    """Markdown's code block indent: four spaces or a tab, also nested (in a list, a quote)."""
    return prefix == "\t" or (len(prefix) >= 4 and prefix == " " * len(prefix))


class PrefixStripper:
    """Holds the learned prefix pattern; `strip` removes it from lines that carry it."""

    def __init__(self) -> None:
        self.active = False
        self._pattern: re.Pattern[str] | None = None
        self.learned: str | None = None

    def learn(self, line: str, content_start: int) -> None:
        prefix = line[:content_start]
        if not prefix or (prefix.isspace() and not _is_code_block_indent(prefix)):
            return
        if self._pattern is not None and self._pattern.match(line):
            return
        self.learned = prefix
        if prefix.isspace():
            # A Markdown indented code block (a blog post, a README): every line of the dump is
            # shifted by the same spaces, its own indentation after them.
            self._pattern = re.compile(re.escape(prefix))
            self.active = True
            return
        # The whitespace after the prefix belongs to it only up to the dump's own indentation:
        # one separating space, then frames keep their tab and stack lines their spaces.
        self._pattern = re.compile(generalise(prefix.rstrip(" ")) + "(?: )?")
        self.active = True

    def strip(self, line: str) -> str:
        if self._pattern is None:
            return line
        match = self._pattern.match(line)
        return line[match.end() :] if match else line
