"""One line about the machine a benchmark ran on, so that figures from two machines compare.

Throughput of pure Python code differs threefold between machines of the same core count; the
reference loop below times the interpreter itself, which the parsers and rules are bound by.
"""

from __future__ import annotations

import os
import platform
import sys
import timeit


def reference_loop_ms() -> float:
    """Best of five: sum(range(1_000_000)), in milliseconds."""
    return min(timeit.repeat("sum(range(1_000_000))", number=1, repeat=5)) * 1000


def describe() -> str:
    cpu = platform.processor() or platform.machine()
    return (
        f"(python {sys.version.split()[0]}, {os.cpu_count()} cpus {cpu}, load {os.getloadavg()[0]:.2f}; "
        f"reference loop sum(range(10**6)): {reference_loop_ms():.1f} ms)"
    )
