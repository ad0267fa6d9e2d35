"""Frame texts as HotSpot and StackTraceElement print them (from the captured fixtures)."""

from __future__ import annotations

import pytest

from kafkadiag.dumps.javaframes import parse_java_frame


@pytest.mark.parametrize(
    ("text", "function", "file", "line", "native", "module"),
    [
        ("java.lang.Thread.sleep(Native Method)", "java.lang.Thread.sleep", None, None, True, None),
        (
            "java.lang.Thread.run(java.base@17.0.15/Thread.java:840)",
            "java.lang.Thread.run",
            "Thread.java",
            840,
            False,
            "java.base@17.0.15",
        ),
        # A hidden (lambda) class: its slash belongs to the class name, not to a module.
        (
            "com.example.DeadlockApp$$Lambda$1/0x00007f76a8000c18.run(Unknown Source)",
            "com.example.DeadlockApp$$Lambda$1/0x00007f76a8000c18.run",
            None,
            None,
            False,
            None,
        ),
        (
            "java.lang.VirtualThread$$Lambda/0x00003800010ff800.run(java.base@25/Unknown Source)",
            "java.lang.VirtualThread$$Lambda/0x00003800010ff800.run",
            None,
            None,
            False,
            "java.base@25",
        ),
        # StackTraceElement.toString(): class loader and module before the class.
        ("app//com.example.Main.main(Main.java:49)", "com.example.Main.main", "Main.java", 49, False, "app"),
        (
            "java.management@17.0.15/sun.management.ThreadImpl.dumpThreads0(Native Method)",
            "sun.management.ThreadImpl.dumpThreads0",
            None,
            None,
            True,
            "java.management@17.0.15",
        ),
    ],
)
def test_frame_forms(text, function, file, line, native, module) -> None:
    frame = parse_java_frame(text)
    assert (frame.function, frame.file, frame.line, frame.native, frame.module) == (
        function,
        file,
        line,
        native,
        module,
    )
    assert frame.text == text
