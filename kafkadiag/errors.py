"""Errors kafkadiag expects, each with its exit code and what the user should do about it."""

from __future__ import annotations

from kafkadiag.exitcodes import ExitCode


class KafkadiagError(Exception):
    """Base of every error that is the input's or the environment's fault, not a bug."""

    exit_code: ExitCode = ExitCode.INTERNAL_ERROR
    HELP_TEXT = ""

    def __init__(self, message: str, help_text: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.help_text = help_text if help_text is not None else self.HELP_TEXT


class UsageError(KafkadiagError):
    exit_code = ExitCode.USAGE
    HELP_TEXT = "Run the command with --help to see its options."


class InputUnreadableError(KafkadiagError):
    exit_code = ExitCode.INPUT_UNREADABLE
    HELP_TEXT = "Check the path and that the file is readable by this user."


class OutputUnwritableError(KafkadiagError):
    """The report could not be written where it was to go (a full disk, stdout on /dev/full)."""

    # Not a bug, and nothing the command line could have said otherwise: the code of a
    # destination, like a source, that the environment makes unusable.
    exit_code = ExitCode.INPUT_UNREADABLE
    HELP_TEXT = (
        "Free space on the device (or raise the file size limit), or name another file with "
        "--output; without it the report goes to stdout."
    )


class NoDumpFoundError(InputUnreadableError):
    HELP_TEXT = (
        "kafkadiag reads jstack/jcmd Thread.print/kill -3 output (also inside logs), the "
        "VisualVM 'Thread t@N' form, jcmd Thread.dump_to_file (text or JSON), IntelliJ debugger "
        "exports, OpenJ9 javacores, Android ANR traces, Spring Boot Actuator's /threaddump (JSON or "
        "text), Thread.getAllStackTraces() an application "
        "logged ('Thread[name,5,main]' and frames), Vert.x's blocked-thread warnings and BlockHound's "
        "errors with their stacks, JConsole's Threads tab text, GoCD's support "
        "report, py-spy dump text "
        "or --json, and Python "
        "stacks printed by faulthandler, the traceback module, pytest-timeout, gdb's py-bt, pystack, "
        "gevent's run info, asyncio's Task.print_stack or oslo.reports' Guru Meditation Report. Capture "
        "one with `jstack -l PID > dump.txt` or "
        "`py-spy dump --pid PID > dump.txt`; if the file is one of those, name its format with "
        "--input-format."
    )


class SandboxError(KafkadiagError):
    """The embedded sandbox (`kafkadiag demo`) could not start or run a part of itself."""

    exit_code = ExitCode.INPUT_UNREADABLE
    HELP_TEXT = (
        "The demo needs a JDK (java, javac, jstack, jcmd) on PATH and the sandbox extra "
        "(pip install 'kafkadiag[sandbox]'); its servers bind free ports on 127.0.0.1."
    )


class SparkUnavailableError(KafkadiagError):
    """The batch pipeline could not start or reach Spark."""

    exit_code = ExitCode.INPUT_UNREADABLE
    HELP_TEXT = (
        "Install the spark extra (pip install 'kafkadiag[spark]') and a JDK; with --master, check "
        "that the cluster's master URL is reachable from this host."
    )
