"""Members of a JSON dump document read defensively: a document edited or cut by hand, or written
by another version of the tool, must give threads or a clear error, never stop the reader."""

from __future__ import annotations

from typing import Any


def json_objects(value: object) -> list[dict[str, Any]]:
    """The objects of a member that should be an array of objects; nothing for anything else."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def json_items(value: object) -> list[Any]:
    """The items of a member that should be an array; nothing for anything else."""
    return value if isinstance(value, list) else []
