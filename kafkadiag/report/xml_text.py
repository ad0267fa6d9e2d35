"""Text and attribute values for the XML reports (JUnit), safe whatever the input held."""

from __future__ import annotations

from xml.sax import saxutils

from kafkadiag.report.safe_text import printable


def escape(text: str) -> str:
    # XML 1.0 cannot carry most control characters at all, even as references.
    return saxutils.escape(printable(text))


def quoteattr(text: str) -> str:
    return saxutils.quoteattr(printable(text))
