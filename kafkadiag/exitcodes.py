"""The process exit codes: the only place the numbers live (documented in README.md)."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0  # ran, and nothing at or above --fail-on was found
    FINDINGS = 1  # ran, and found something at or above --fail-on (or the check is unhealthy)
    USAGE = 2  # bad command line (click's own convention)
    INPUT_UNREADABLE = 3  # input missing, unreadable, unreachable, or holding no dump
    INTERNAL_ERROR = 4  # a bug in kafkadiag: please report it with the traceback
    INTERRUPTED = 130  # stopped by Ctrl-C (SIGINT) before it finished: the shell's 128 + 2
    TERMINATED = 143  # stopped by SIGTERM (kill, a timeout, systemd) before it finished: 128 + 15
