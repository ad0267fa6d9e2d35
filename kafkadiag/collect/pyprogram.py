"""What a Python process runs, from its command line: the `-c` code, the `-m` module or the
script, and whether that program uses kafka-python.

kafka-python is pure Python: it maps no shared library, and which modules a process imported
cannot be read from outside it without attaching to it. The program the interpreter was started
with is the trace left instead: `-c` code that imports kafka, a script whose source imports it
(read, as a config file is, never executed), or a module or script named after Kafka. Any other
argument that mentions Kafka (a test file's path, a topic's name) says nothing of what the
process loaded, and a test runner (pytest, unittest, tox, nox) is never a consumer by its command
line, whichever tests it was asked to run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

# Interpreter options that take a value as the next argument.
_OPTIONS_WITH_VALUE = ("-W", "-X", "--check-hash-based-pycs")
TEST_RUNNERS = re.compile(r"^(pytest|py\.test|unittest|nose2?|tox|nox)$")
_IMPORTS_KAFKA = re.compile(r"\bimport\s+(?:[\w.]+\s*,\s*)*kafka\b|\bfrom\s+kafka(?:\.\w+)*\s+import\b")
_NAMED_KAFKA = re.compile(r"kafka(?!diag)", re.I)
_BROKER_OPTION = re.compile(r"^--?bootstrap[._-]?servers?(?:=|$)", re.I)
SCRIPT_LIMIT = 256 * 1024


@dataclass(frozen=True)
class Program:
    how: str  # "-c", "-m" or "script" ("" for an interactive interpreter)
    what: str  # the code, the module's name or the script's path
    arguments: tuple[str, ...]


def program_of(cmdline: list[str]) -> Program:
    """The program `python [options] (-c CODE | -m MODULE | SCRIPT) ARGS` runs."""
    index = 1
    while index < len(cmdline):
        argument = cmdline[index]
        if argument in ("-c", "-m") and index + 1 < len(cmdline):
            return Program(argument, cmdline[index + 1], tuple(cmdline[index + 2 :]))
        if argument.startswith(("-c", "-m")) and len(argument) > 2 and not argument.startswith("--"):
            return Program(argument[:2], argument[2:], tuple(cmdline[index + 1 :]))
        if not argument.startswith("-") or argument == "-":
            return Program("script", argument, tuple(cmdline[index + 1 :]))
        index += 2 if argument in _OPTIONS_WITH_VALUE else 1
    return Program("", "", ())


def is_test_runner(program: Program) -> bool:
    if program.how == "-m":
        return bool(TEST_RUNNERS.match(program.what.split(".")[0]))
    if program.how == "script":
        return bool(TEST_RUNNERS.match(os.path.basename(program.what).removesuffix(".py")))
    return False


def kafka_python_trace(cmdline: list[str], cwd: str = "") -> str | None:
    """Where the command line shows kafka-python in use, said as evidence; None if it does not.
    `cwd` is the process's working directory, where a relative script path starts."""
    program = program_of(cmdline)
    if is_test_runner(program):
        return None
    if program.how == "-c" and _IMPORTS_KAFKA.search(program.what):
        return "command line: -c code imports kafka"
    if program.how == "script" and _IMPORTS_KAFKA.search(_read_script(os.path.join(cwd, program.what))):
        return f"script imports kafka: {program.what}"
    if program.how in ("-m", "script") and _NAMED_KAFKA.search(os.path.basename(program.what)):
        return f"command line: {program.how} {program.what}"
    for argument in program.arguments:
        if _BROKER_OPTION.match(argument):
            return f"command line: {argument.split('=', 1)[0]}"
    return None


def _read_script(path: str) -> str:
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > SCRIPT_LIMIT:
            return ""
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""
