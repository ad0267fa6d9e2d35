"""`kafkadiag ps`: the Kafka consumer processes on this host (docs/diagnose.md)."""

from __future__ import annotations

import json
import sys

import click

from kafkadiag.commands.formats import format_option
from kafkadiag.exitcodes import ExitCode

SCHEMA = "kafkadiag.ps"
VERSION = 1


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return (
        f"{days}d{hours:02d}h"
        if days
        else f"{hours}h{minutes:02d}m"
        if hours
        else f"{minutes}m{seconds:02d}s"
    )


def run_ps(output_format: str) -> int:
    from kafkadiag.collect.processes import as_json, find_consumers

    consumers = find_consumers()
    if output_format == "json":
        document = {"schema": SCHEMA, "version": VERSION, "processes": [as_json(c) for c in consumers]}
        sys.stdout.write(json.dumps(document, indent=1) + "\n")
        return int(ExitCode.OK)
    from kafkadiag.report.safe_text import printable
    from kafkadiag.report.texttable import render_table

    rows = [
        [str(c.pid), printable(c.user or "?"), c.kind, str(c.threads), f"{c.cpu_s:.1f}s",
         f"{c.rss_bytes / 2**20:.0f}M", _duration(c.uptime_s), printable(",".join(c.groups) or "-"),
         printable(",".join(c.client_ids) or "-"), printable(c.command)]
        for c in consumers
    ]  # fmt: skip
    header = ["PID", "USER", "KIND", "THREADS", "CPU", "RSS", "UPTIME", "GROUPS", "CLIENT-IDS", "COMMAND"]
    if not rows:
        sys.stdout.write("No Kafka consumer process found.\n")
        return int(ExitCode.OK)
    # Narrower than the terminal, the command line, then the client ids and groups go under
    # their row rather than being cut.
    render_table(sys.stdout, f"Kafka consumer processes ({len(rows)})", header, rows,
                 caps=[8, 16, 16, 7, 10, 8, 8, 60, 60, 200], right_aligned=(0, 3, 4, 5),
                 stacked=(9, 8, 7))  # fmt: skip
    return int(ExitCode.OK)


@click.command("ps", short_help="List the Kafka consumer processes on this host.")
@format_option(("table", "json"), "table for people, json for machines (schema kafkadiag.ps).")
def ps_command(output_format: str) -> int:
    """The Kafka consumer processes on this host: JVMs with Kafka client classes or jars (old and
    new consumers, Kafka Streams, Spring Kafka, Flink, Storm; a fat jar is recognised by its
    threads' names) and Python processes using kafka-python, confluent-kafka or aiokafka; with
    the group and client ids their command lines and config files name. Brokers and ZooKeeper
    servers are not listed. Reads /proc only: the processes are not touched.

    A Python process is recognised by the libraries it mapped (confluent-kafka's librdkafka,
    aiokafka's extensions) or, for kafka-python, which maps none, by the program it runs: -c
    code or a script whose source imports kafka, a module or script named after Kafka, or a
    --bootstrap-server option. Another argument that mentions Kafka is not enough, and a test
    runner (pytest, unittest, tox, nox) is not listed for its command line."""

    return run_ps(output_format)
