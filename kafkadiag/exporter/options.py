"""The options `kafkadiag lag` takes for Prometheus: --serve, --min-interval, --cluster-name and
--keep (the retention of --record). Kept here so that the command's own code stays short."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kafkadiag.durations import DURATION

if TYPE_CHECKING:
    from kafkadiag.collect.retention import Keep

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ExporterOptions:
    serve: str | None
    min_interval_s: float
    cluster_name: str | None
    keep: Keep | None


def _keep(ctx: click.Context, param: click.Parameter, value: str | None) -> Keep | None:
    if value is None:
        return None
    # Imported here: every command declares this option, and only --record reads a retention.
    from kafkadiag.collect.retention import parse_keep

    try:
        return parse_keep(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def exporter_options(command: F) -> F:
    options = [
        click.option(
            "--serve",
            metavar="HOST:PORT",
            default=None,
            help="Serve /metrics for Prometheus, collecting when scraped (port 0: a free one).",
        ),
        click.option(
            "--min-interval",
            type=DURATION,
            default="10s",
            show_default=True,
            help="With --serve: scrapes within this time of a collection get its result.",
        ),
        click.option(
            "--cluster-name",
            default=None,
            help="The cluster label of Prometheus series [default: --bootstrap-server, else --zookeeper].",
        ),
        click.option(
            "--keep",
            default=None,
            callback=_keep,
            help="With --record: drop snapshots older than an age (7d, 36h) or beyond a size (500MB).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def pop_exporter_options(
    options: dict[str, Any], record_dir: str | None, watch: bool, output: str | None
) -> ExporterOptions:
    """Take these options out of the command's keyword arguments, refusing combinations that
    mean nothing (a retention without a recording, a server that also writes a report)."""
    chosen = ExporterOptions(
        serve=options.pop("serve"),
        min_interval_s=options.pop("min_interval"),
        cluster_name=options.pop("cluster_name"),
        keep=options.pop("keep"),
    )
    if chosen.keep is not None and record_dir is None:
        raise click.UsageError("--keep is the retention of --record DIR: name the directory")
    if chosen.serve is not None and (watch or output is not None):
        raise click.UsageError("--serve answers scrapes; it takes neither --watch nor --output")
    return chosen
