"""py-spy dumps: `py-spy dump --json` (py-spy 0.3 and 0.4), one JSON array of thread objects with
their frames and, with --locals, each frame's variables. A thread reads as the same thread from the
text form (pyspy.py) would: the same header, frames and lock events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from kafkadiag import boundedjson
from kafkadiag.dumps.jsonmembers import json_objects
from kafkadiag.dumps.pyspy import pyspy_thread, python_frame
from kafkadiag.errors import InputUnreadableError
from kafkadiag.model import DumpFormat, Frame, Thread, ThreadDump, Variable

# py-spy JSON is one document; it is read whole, so its size is capped (py-spy's own output
# for a process with thousands of threads and --locals stays far below this).
MAX_JSON_CHARS = 256 * 1024 * 1024


def parse_pyspy_json(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    """`py-spy dump --json`: one JSON array of threads (several processes with --subprocesses)."""
    document, line_count = _read_document(batches, source)
    if document is None:
        return
    by_pid: dict[int | None, list[Thread]] = {}
    from_core = _from_core_file(document)
    for position, item in enumerate(document):
        pid = item.get("pid")
        pid = pid if isinstance(pid, int) and pid > 0 else None
        by_pid.setdefault(pid, []).append(_json_thread(item, position, from_core))
    for index, (pid, threads) in enumerate(by_pid.items()):
        yield ThreadDump(
            source=source,
            index=index,
            format=DumpFormat.PYSPY_JSON,
            line_no=1,
            end_line_no=line_count,
            threads=tuple(threads),
            producer="py-spy",
            pid=pid,
        )


def _read_document(batches: Iterable[list[str]], source: str) -> tuple[list[dict] | None, int]:  # type: ignore[type-arg]
    """The whole document as a list of thread objects (None when the input is blank) and its line
    count; InputUnreadableError when it is too large, not JSON, or not py-spy's layout."""
    parts: list[str] = []
    size = 0
    line_count = 0
    for batch in batches:
        for line in batch:
            size += len(line) + 1
            line_count += 1
        if size > MAX_JSON_CHARS:
            raise InputUnreadableError(
                f"{source}: py-spy JSON larger than {MAX_JSON_CHARS // (1024 * 1024)} MB",
                help_text="Split the file, or capture the text form (py-spy dump without --json).",
            )
        parts.append("\n".join(batch))
    text = "\n".join(parts)
    if not text.strip():
        return None, line_count
    try:
        document = boundedjson.loads(text)
    except json.JSONDecodeError as error:
        raise InputUnreadableError(
            f"{source}: not valid py-spy JSON: {error.msg} at line {error.lineno} column {error.colno}",
            help_text="The file may be truncated. Capture again with `py-spy dump --pid PID --json`, "
            "or pass --input-format to read it as another format.",
        ) from None
    except boundedjson.JsonBoundsError as error:
        raise InputUnreadableError(
            f"{source}: not py-spy's JSON: {error}",
            help_text="py-spy writes threads of frames a few levels deep. Capture again with "
            "`py-spy dump --pid PID --json`, or pass --input-format to read it as another format.",
        ) from None
    if isinstance(document, dict):
        document = [document]
    if not isinstance(document, list) or not all(isinstance(item, dict) for item in document):
        raise InputUnreadableError(
            f"{source}: JSON, but not py-spy's dump layout (a list of thread objects)",
            help_text="Capture with `py-spy dump --pid PID --json`.",
        )
    return document, line_count


def _from_core_file(document: list[dict]) -> bool:  # type: ignore[type-arg]
    """`py-spy dump --core --json`: py-spy marks every thread of a core file active (a core does not
    say which thread was idle) and gives no process id (0). A live process always has idle threads."""
    return bool(document) and all(item.get("pid") == 0 and item.get("active") is True for item in document)


def _json_thread(item: dict, position: int, from_core: bool = False) -> Thread:  # type: ignore[type-arg]
    frames: list[Frame] = []
    for raw in json_objects(item.get("frames")):
        variables = tuple(
            Variable(str(v.get("name", "")), str(v.get("repr", "")), bool(v.get("arg")))
            for v in json_objects(raw.get("locals"))
        )
        short = raw.get("short_filename") or raw.get("filename") or ""
        line = raw.get("line")
        location = f"{short}:{line}" if isinstance(line, int) and line > 0 else str(short)
        frame = python_frame(str(raw.get("name", "?")), location, variables)
        if raw.get("filename"):
            module = raw.get("module")
            frame = frame._replace(
                file=str(raw["filename"]), module=module if isinstance(module, str) else None
            )
        frames.append(frame)
    thread_id = item.get("thread_id") if isinstance(item.get("thread_id"), int) else 0
    os_id = item.get("os_thread_id") if isinstance(item.get("os_thread_id"), int) else None
    name = str(item.get("thread_name") or "")
    # The header py-spy's text form prints for the same thread (OS id when known, else the
    # Python thread id in hex), so that both forms give identical threads.
    shown_id = os_id if os_id is not None else f"{thread_id:#x}"
    if from_core:
        # As the text form of a core: no activity, only who holds the GIL; the frames tell the state.
        flags = "gil" if item.get("owns_gil") else ""
        header = f'Thread {shown_id}{" (gil)" if flags else ""}: "{name}"'
    else:
        flags = ("active" if item.get("active") else "idle") + ("+gil" if item.get("owns_gil") else "")
        header = f'Thread {shown_id} ({flags}): "{name}"'
    # A JSON document has no useful line numbers; the thread's position stands in for it.
    return pyspy_thread(name, flags, header, position + 1, frames)
