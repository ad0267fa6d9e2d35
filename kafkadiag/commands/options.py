"""The options commands share, each stack declared once: the dump inputs, the rule selection, the
connection to a cluster, the consumer's metrics source, sampling; and the small helpers every
command's body uses (progress on large files, a reader that leaves early)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from kafkadiag.commands.completion import complete_groups, complete_paths, complete_rules
from kafkadiag.commands.formats import format_option
from kafkadiag.commands.input_bounds import input_bound_options
from kafkadiag.console import set_verbose
from kafkadiag.durations import DURATION
from kafkadiag.errors import InputUnreadableError
from kafkadiag.exitcodes import ExitCode
from kafkadiag.model import DumpFormat

if TYPE_CHECKING:
    from kafkadiag.collect.metrics import MetricsSource

# From the model, not kafkadiag.dumps: importing the parsers costs every command (lag included)
# tens of milliseconds it does not use.
INPUT_FORMATS = ("auto", *(dump_format.value for dump_format in DumpFormat))


def _input_format_help(line_width: int = 40) -> str:
    """--input-format's help: the formats in lines of their own, kept as they are (click's `\b`),
    since click would wrap them at their hyphens ("py-" / "spy")."""
    lines = ["Dump format (see docs/inputs.md); auto detects it from the first lines.", "", "\b"]
    line = ""
    for name in INPUT_FORMATS:
        if line and len(line) + len(name) + 2 > line_width:
            lines.append(line + ",")
            line = ""
        line = f"{line}, {name}" if line else name
    return "\n".join([*lines, line])


# Every command that writes a report takes it the same way.
output_option = click.option(
    "--output",
    "-o",
    default=None,
    shell_complete=complete_paths,
    help="Write the report to this file (atomically).",
)


def dump_inputs(schema: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The arguments and options every dump command takes: files, input format, output."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        command = input_bound_options(command)
        command = output_option(command)
        command = format_option(
            ("table", "json"), f"table for people, json for machines (schema {schema}, see README)."
        )(command)
        command = click.option(
            "--input-format",
            type=click.Choice(INPUT_FORMATS),
            # A metavar, not the list of choices: the formats are too many for one line of
            # --help, and the help text (which click wraps) names them.
            metavar="FORMAT",
            default="auto",
            show_default=True,
            help=_input_format_help(),
        )(command)
        return click.argument("files", nargs=-1, required=True, shell_complete=complete_paths)(command)

    return decorate


def stacked(command: Callable[..., Any], options: list[Callable[..., Any]]) -> Callable[..., Any]:
    """`command` with `options` applied, listed in --help in the order they are written."""
    for option in reversed(options):
        command = option(command)
    return command


def bundles_expanded(files: tuple[str, ...]) -> tuple[str, ...]:
    """FILES with each capture bundle replaced by its dump files; what a bundle refuses to read
    (a path outside it, a FIFO, a manifest that is not one) is a warning naming it."""
    from kafkadiag.collect.bundle import expand_bundles
    from kafkadiag.console import warn

    expanded, refused = expand_bundles(files)
    for caveat in refused:
        warn(caveat)
    if not expanded:
        raise InputUnreadableError(
            f"no dump file could be read from {', '.join(files)}",
            help_text="The bundle's manifest names no file inside its directory (see the warnings "
            "above); capture again with `kafkadiag capture --pid PID --out DIR`."
            if refused  # else no warning was given: the directories hold no file of their own
            else "A directory is read as one capture bundle: the files in it, not in its "
            "subdirectories. Name the dump files themselves, or give `kafkadiag batch` the tree.",
        )
    return expanded


def reader_may_leave(command: Callable[[], int]) -> int:
    """Run a command whose reader may stop reading (`kafkadiag ... | head`): that is not an error.

    The rest of the output goes to /dev/null, as the Python documentation recommends for
    SIGPIPE, so that the final flush does not fail either.
    """
    try:
        return command()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return int(ExitCode.OK)


def _known_rules(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """--select/--ignore values that name no rule are usage errors, not silently empty runs."""
    if not value:
        return value
    # The registry's table of codes and names, not the rules: checking a name loads no rule family.
    from kafkadiag.rules.registry import codes_and_names

    table = sorted(codes_and_names())
    unknown = [
        pattern
        for pattern in value
        if not any(code.startswith(pattern.upper()) or name == pattern.lower() for code, name in table)
    ]
    if unknown:
        known = ", ".join(f"{code} ({name})" for code, name in table)
        raise click.BadParameter(
            f"no rule is named {', '.join(unknown)}; the rules are: {known} (`kafkadiag rules` lists them)"
        )
    return value


def rule_options(fail_on: str, example_prefix: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--fail-on, --select and --ignore: how every command that runs the rule catalogue is steered."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        options = [
            click.option(
                "--fail-on",
                type=click.Choice(("error", "warning", "info")),
                default=fail_on,
                show_default=True,
                help="Exit 1 when a finding of this severity or worse is found.",
            ),
            click.option(
                "--select",
                multiple=True,
                shell_complete=complete_rules,
                callback=_known_rules,
                help=f"Run only these rules (code, code prefix like {example_prefix}, or name).",
            ),
            click.option(
                "--ignore",
                multiple=True,
                shell_complete=complete_rules,
                callback=_known_rules,
                help="Do not run these rules (code, code prefix or name).",
            ),
        ]
        return stacked(command, options)

    return decorate


def verbose_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--verbose for the commands whose table report can show each finding's evidence."""
    return click.option(
        "--verbose",
        "-v",
        is_flag=True,
        expose_value=False,
        callback=lambda ctx, param, value: set_verbose(bool(value)),
        help="Also show each finding's evidence and the rules run and skipped (JSON always has them).",
    )(command)


LAG_FORMATS = ("table", "json", "prometheus")


# lag --samples and check take their sampling interval the same way.
sample_interval_option = click.option(
    "--interval",
    type=DURATION,
    default="10s",
    show_default=True,
    help="Time between samples (10s, 1m; a bare number is seconds).",
)


# Where Burrow's statuses are evaluated (lag --samples, lag history, check), as Burrow's
# evaluator allowed-lag setting.
allowed_lag_option = click.option(
    "--allowed-lag",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Lag (records) a partition may have and still be OK in Burrow's statuses.",
)


def _remember_zookeeper_setting(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    # Kept on the context rather than passed as arguments: every command taking the connection
    # options reads them the same way through zookeeper_security().
    ctx.meta[f"kafkadiag.{param.name}"] = value


def connection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--bootstrap-server",
            envvar="KAFKADIAG_BOOTSTRAP_SERVER",
            help="Brokers (host:port,...) for Kafka-stored offsets and watermarks. "
            "Env: KAFKADIAG_BOOTSTRAP_SERVER.",
        ),
        click.option(
            "--zookeeper",
            envvar="KAFKADIAG_ZOOKEEPER",
            help="ZooKeeper (host:port,...[/chroot]) for old-consumer groups. Env: KAFKADIAG_ZOOKEEPER.",
        ),
        click.option(
            "--command-config",
            envvar="KAFKADIAG_COMMAND_CONFIG",
            shell_complete=complete_paths,
            help="Client properties file (SSL/SASL) as Kafka's tools take it. Env: KAFKADIAG_COMMAND_CONFIG.",
        ),
        click.option(
            "--group",
            "groups",
            multiple=True,
            shell_complete=complete_groups,
            help="A consumer group (repeatable).",
        ),
        click.option("--all-groups", is_flag=True, help="Every group found in ZooKeeper and on the brokers."),
        click.option("--topic", "topics", multiple=True, help="Only these topics (repeatable)."),
        click.option(
            "--timeout",
            type=DURATION,
            default="10s",
            show_default=True,
            envvar="KAFKADIAG_TIMEOUT",
            help="How long to wait for ZooKeeper or a broker before giving up (exit 3): 500ms, 10s, 2m; "
            "a bare number is seconds. Env: KAFKADIAG_TIMEOUT.",
        ),
        click.option(
            "--zk-tls-config-file",
            envvar="KAFKADIAG_ZK_TLS_CONFIG_FILE",
            shell_complete=complete_paths,
            expose_value=False,
            callback=_remember_zookeeper_setting,
            help="ZooKeeper TLS settings, Kafka's zookeeper.ssl.* properties with PEM files. "
            "Env: KAFKADIAG_ZK_TLS_CONFIG_FILE.",
        ),
        click.option(
            "--zk-jaas-file",
            shell_complete=complete_paths,
            expose_value=False,
            callback=_remember_zookeeper_setting,
            help="A JAAS file whose Client section (DigestLoginModule) logs in to ZooKeeper. "
            "Env: KAFKADIAG_ZK_JAAS_FILE; digest identity: KAFKADIAG_ZK_DIGEST=user:password.",
        ),
    ]
    return stacked(command, options)


# The consumer's own metrics, for `maxlag` and for the fetcher columns of `lag`. Full
# documentation: docs/maxlag.md.


def metrics_source_options(command: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--pid", type=int, default=None, help="A local JVM by process id (same user, or root)."),
        click.option(
            "--jmx",
            "jmx_target",
            default=None,
            help="Remote JMX: host:port (com.sun.management.jmxremote.port) or a service:jmx: URL. "
            "Credentials: KAFKADIAG_JMX_USER / KAFKADIAG_JMX_PASSWORD.",
        ),
        click.option("--jolokia", default=None, help="A Jolokia agent's URL, e.g. http://host:8778/jolokia."),
        click.option(
            "--prometheus",
            default=None,
            help="A Prometheus JMX exporter's /metrics URL, or a file holding its text exposition.",
        ),
        click.option(
            "--no-start-agent",
            is_flag=True,
            help="With --pid: do not start the JDK's local management agent (fail if it does not run).",
        ),
        click.option(
            "--consumer-config",
            default=None,
            shell_complete=complete_paths,
            help="The consumer's properties file (queued.max.message.chunks, fetch.message.max.bytes, "
            "auto.commit.interval.ms); overrides the JVM's -D settings and Kafka's defaults.",
        ),
        click.option(
            "--lag-threshold",
            type=int,
            default=None,
            help="Records of fetcher lag that count as behind "
            "[default: what one fetch brings per partition].",
        ),
    ]
    return stacked(command, options)


def metrics_source(options: dict[str, Any], timeout: float) -> MetricsSource | None:
    """The MetricsSource named by the options of `metrics_source_options`, taken out of `options`
    (a command's **kwargs), or None when no source is named: then the metrics code is not even
    imported, which keeps `kafkadiag lag` as quick to start as without it."""
    pid, jmx, jolokia, prometheus = (
        options.pop(name) for name in ("pid", "jmx_target", "jolokia", "prometheus")
    )
    start_agent = not options.pop("no_start_agent")
    if pid is None and jmx is None and jolokia is None and prometheus is None:
        return None
    from kafkadiag.collect.metrics import MetricsSource

    return MetricsSource(
        pid=pid, jmx=jmx, jolokia=jolokia, prometheus=prometheus, start_agent=start_agent, timeout_s=timeout
    )
