"""Cutting a captured jstack text apart, to build variants of it for a rule's tests."""

from __future__ import annotations


def thread_block(text: str, name: str) -> str:
    """The block of the thread `name`, from its header to the blank line after its stack."""
    start = text.index(f'"{name}"')
    return text[start : text.index("\n\n", start)]
