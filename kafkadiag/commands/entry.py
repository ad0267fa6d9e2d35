"""Running a command: errors mapped to exit codes in one place, SIGTERM turned into a clean stop,
and the executable's quick exit."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, TextIO, cast

import click

from kafkadiag.console import report_error
from kafkadiag.errors import KafkadiagError, OutputUnwritableError
from kafkadiag.exitcodes import ExitCode
from kafkadiag.report.safe_text import ControlEscapingStream, printable


class Terminated(BaseException):
    """SIGTERM, raised wherever the program is (as Ctrl-C raises KeyboardInterrupt), so that the
    clean-ups in `finally` and `except BaseException` run: a report's temporary file, a capture's
    staging directory, a batch's Spark session. Left to its default action, SIGTERM ended the
    process on the spot and left a `.kafkadiag-XXXX` file beside the report."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


def run(command: click.Command, argv: list[str] | None = None, prog_name: str = "kafkadiag") -> int:
    """Run a command (the `kafkadiag` group, or `batch` under spark-submit); return the exit code
    instead of raising SystemExit. The one place that maps errors to exit codes."""
    try:
        result: Any = command.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except click.exceptions.Abort:  # Ctrl-C: click turns KeyboardInterrupt into Abort
        click.echo("kafkadiag: interrupted; nothing was reported.", err=True)
        return int(ExitCode.INTERRUPTED)
    except Terminated:
        click.echo("kafkadiag: stopped by SIGTERM before it finished; no report file was left.", err=True)
        return int(ExitCode.TERMINATED)
    except click.ClickException as error:
        # Its message quotes the value given (a glob's file name, an environment variable).
        error.show(file=cast(TextIO, ControlEscapingStream(sys.stderr)))
        return int(ExitCode.USAGE)
    except KafkadiagError as error:
        report_error(error)
        return int(error.exit_code)
    except OSError as error:
        if error.errno not in _NO_ROOM:
            return _internal_error()
        # Only writing meets these, wherever it was not caught as OutputUnwritableError (a
        # command's own echo to stdout): the environment's fault, never a bug.
        report_error(OutputUnwritableError(f"cannot write: {error.strerror or error}"))
        return int(ExitCode.INPUT_UNREADABLE)
    except Exception:  # noqa: BLE001 - the one place that turns a bug into exit code 4
        return _internal_error()
    if isinstance(result, int):
        return result
    return int(ExitCode.OK)


# A full disk, a full quota, a file over the size limit.
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _internal_error() -> int:
    """Called in an `except` block: the traceback, and the code for a bug."""
    import traceback

    # An exception's message may quote the input that raised it (a thread name, a znode's value).
    sys.stderr.write(printable(traceback.format_exc()))
    click.echo("kafkadiag: internal error (a bug). Please report it with the traceback above.", err=True)
    return int(ExitCode.INTERNAL_ERROR)


def console_main(main: Callable[[], int]) -> None:
    """The `kafkadiag` executable: run, flush, and leave without tearing the heap down.

    Freeing a parsed 10,000-thread dump object by object at interpreter exit costs a tenth of a
    second that nobody waits for willingly. Everything kafkadiag writes is flushed or closed
    (reports go to stdout or to files renamed into place) before this point.
    """
    signal.signal(signal.SIGTERM, _raise_terminated)
    code = main()
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass
    except OSError as error:  # stdout on a full disk or /dev/full: the report did not arrive
        report_error(OutputUnwritableError(f"cannot write to <stdout>: {error.strerror or error}"))
        code = code if code > ExitCode.FINDINGS else int(ExitCode.INPUT_UNREADABLE)
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)
