"""The command line: the `kafkadiag` group with its global options (the one place for them), and
its commands. Each command is defined beside its body in kafkadiag/commands/: its options, one
library call (kafkadiag.app), one reporter and an exit code. `main` runs it; errors become exit
codes in kafkadiag.commands.entry.

Heavy libraries (kafka, kazoo, pyspark, psutil, and rich for tables) are imported inside the
commands that need them, so `kafkadiag --help` stays fast.
"""

from __future__ import annotations

import click

from kafkadiag import __version__
from kafkadiag.commands import (
    batch,
    capture,
    check,
    demo,
    diagnose,
    dump_analyze,
    dump_parse,
    entry,
    lag,
    maxlag,
    ps,
    rules,
)
from kafkadiag.console import COLOR_MODES, set_color_mode


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="kafkadiag")
@click.option(
    "--color",
    type=click.Choice(COLOR_MODES),
    default="auto",
    show_default=True,
    help="Colour severities and statuses: auto colours a terminal unless NO_COLOR is set.",
)
def cli(color: str) -> None:
    """Diagnose Kafka consumer stalls and lag.

    Reads thread dumps (jstack, jcmd, kill -3, py-spy), ZooKeeper consumer nodes and
    Kafka-stored offsets; never writes to ZooKeeper, commits offsets or joins a group.

    Exit codes: 0 ok, 1 findings at or above --fail-on, 2 usage error,
    3 input unreadable or no dump found, 4 internal error.
    """
    set_color_mode(color)


@cli.group(short_help="Parse and analyse thread dumps.")
def dump() -> None:
    """Parse and analyse thread dumps."""


dump.add_command(dump_parse.dump_parse)
dump.add_command(dump_analyze.dump_analyze)
for command in (
    rules.rules_command,
    rules.explain_command,
    demo.demo_command,
    batch.batch_command,
    ps.ps_command,
    capture.capture_command,
    diagnose.diagnose_command,
    lag.lag_command,
    check.check_command,
    maxlag.maxlag_command,
):
    cli.add_command(command)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code instead of raising SystemExit."""
    return entry.run(cli, argv)


def console_main() -> None:
    """The `kafkadiag` executable (see entry.console_main)."""
    entry.console_main(main)
