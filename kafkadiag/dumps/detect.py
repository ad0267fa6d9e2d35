"""Guess which dump format a text holds from its first lines."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kafkadiag.model import DumpFormat

# How far to look before settling on the default. A kill -3 log may hold megabytes of
# application output before its first dump; HotSpot is the default for exactly that reason.
SNIFF_LINES = 20_000

_PYSPY_HEADER = re.compile(r'^Thread (?:0x[0-9A-Fa-f]+|\d+) \((?:idle|active)[^)]*\): "')
_PYSPY_PROCESS = re.compile(r"^Process \d+: ")
_NETBEANS_HEADER = re.compile(r'^".*"\s+.*\bt@\d+\b|^Thread t@\d+:')
_HOTSPOT_HEADER = re.compile(r'^".*" (?:#\d+ |daemon |prio=|tid=|Id=)')


def detect_format(lines: Sequence[str]) -> DumpFormat:
    """Decide from a sample of lines. Falls back to HotSpot, which also reads plain logs."""
    sample = lines[:SNIFF_LINES]
    first = next((line.strip() for line in sample if line.strip()), "")
    if first[:1] in ("[", "{") and any('"thread_name"' in line for line in sample[:2000]):
        return DumpFormat.PYSPY_JSON
    hotspot = False
    for line in sample:
        stripped = line.lstrip()
        if not stripped:
            continue
        if _PYSPY_PROCESS.match(stripped) or _PYSPY_HEADER.match(stripped):
            return DumpFormat.PYSPY
        if _NETBEANS_HEADER.match(stripped):
            # VisualVM prints HotSpot's banner too; its thread headers decide.
            return DumpFormat.NETBEANS
        if _HOTSPOT_HEADER.match(stripped):
            return DumpFormat.HOTSPOT
        hotspot = hotspot or "Full thread dump" in line
    if hotspot:
        return DumpFormat.HOTSPOT
    return DumpFormat.HOTSPOT
