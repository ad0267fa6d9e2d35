"""The command line. Each command parses options, calls one library function, hands the result
to a reporter and returns an exit code; `main` maps errors to exit codes in one place.

Heavy libraries (kafka, kazoo, pyspark, psutil, and rich for tables) are imported inside the
commands that need them, so `kafkadiag --help` stays fast.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import click

from kafkadiag import __version__
from kafkadiag.commands.input_bounds import input_bound_options
from kafkadiag.commands.targets import lag_target, zookeeper_security
from kafkadiag.console import COLOR_MODES, report_error, set_color_mode, set_verbose
from kafkadiag.durations import DURATION
from kafkadiag.errors import InputUnreadableError, KafkadiagError, OutputUnwritableError
from kafkadiag.exitcodes import ExitCode
from kafkadiag.exporter.options import exporter_options, pop_exporter_options
from kafkadiag.model import DumpFormat
from kafkadiag.moments import MOMENT

# From the model, not kafkadiag.dumps: importing the parsers costs every command (lag included)
# tens of milliseconds it does not use.
INPUT_FORMATS = ("auto", *(dump_format.value for dump_format in DumpFormat))
# Files at least this large get a progress bar on an interactive stderr.
PROGRESS_MIN_BYTES = 32 * 1024 * 1024


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kafkadiag")
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


def dump_inputs(schema: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The arguments and options every dump command takes: files, input format, output."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        command = input_bound_options(command)
        command = click.option(
            "--output", "-o", default=None, help="Write the report to this file (atomically)."
        )(command)
        command = click.option(
            "--format",
            "output_format",
            type=click.Choice(("table", "json")),
            default="table",
            show_default=True,
            help=f"table for people, json for machines (schema {schema}, see README).",
        )(command)
        command = click.option(
            "--input-format",
            type=click.Choice(INPUT_FORMATS),
            default="auto",
            show_default=True,
            help="Dump format; auto detects it from the first lines.",
        )(command)
        return click.argument("files", nargs=-1, required=True)(command)

    return decorate


@cli.group()
def dump() -> None:
    """Parse and analyse thread dumps."""


@dump.command("parse")
@dump_inputs(schema="kafkadiag.dumps")
def dump_parse(files: tuple[str, ...], input_format: str, output_format: str, output: str | None) -> int:
    """Show what was understood in FILE... (use - for stdin; gzip is read transparently; a
    `kafkadiag capture` bundle directory stands for its dumps).

    Per dump: threads by status, threads with identical stacks, locks with their holders and
    waiters, deadlocks, and the count of lines that were not understood.
    """
    from kafkadiag.commands.dump_parse import run_dump_parse

    files = _bundles_expanded(files)

    return reader_may_leave(
        lambda: run_dump_parse(
            files,
            None if input_format == "auto" else input_format,
            output_format,
            output,
            show_progress=_wants_progress(files),
        )
    )


def _bundles_expanded(files: tuple[str, ...]) -> tuple[str, ...]:
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
            "above); capture again with `kafkadiag capture --pid PID --out DIR`.",
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
    from kafkadiag.rules.engine import RULES, rule_matches

    unknown = [pattern for pattern in value if not any(rule_matches(rule, [pattern]) for rule in RULES)]
    if unknown:
        known = ", ".join(f"{rule.code} ({rule.name})" for rule in sorted(RULES, key=lambda rule: rule.code))
        raise click.BadParameter(
            f"no rule is named {', '.join(unknown)}; the rules are: {known} (`kafkadiag rules` lists them)"
        )
    return value


def _rule_options(fail_on: str, example_prefix: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
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
                callback=_known_rules,
                help=f"Run only these rules (code, code prefix like {example_prefix}, or name).",
            ),
            click.option(
                "--ignore",
                multiple=True,
                callback=_known_rules,
                help="Do not run these rules (code, code prefix or name).",
            ),
        ]
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _verbose_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--verbose for the commands whose table report can show each finding's evidence."""
    return click.option(
        "--verbose",
        "-v",
        is_flag=True,
        expose_value=False,
        callback=lambda ctx, param, value: set_verbose(bool(value)),
        help="Also show each finding's evidence and the rules run and skipped (JSON always has them).",
    )(command)


@dump.command("analyze")
@dump_inputs(schema="kafkadiag.analysis")
@_rule_options(fail_on="error", example_prefix="KD2")
@_verbose_option
@click.option(
    "--junit-xml",
    "junit_path",
    default=None,
    help="Also write a JUnit XML report (one test case per rule, plus the input) to this file.",
)
def dump_analyze(
    files: tuple[str, ...],
    input_format: str,
    output_format: str,
    output: str | None,
    fail_on: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    junit_path: str | None,
) -> int:
    """Explain stalls in FILE...: what is stuck, on what, held by whom, and what to do.

    Dumps of one process taken over time (several files, or one log of kill -3 output) are
    analysed together: findings say in how many dumps they hold, and threads that never move
    are reported.
    """
    from kafkadiag.commands.dump_analyze import run_dump_analyze

    files = _bundles_expanded(files)

    return reader_may_leave(
        lambda: run_dump_analyze(
            files,
            None if input_format == "auto" else input_format,
            output_format,
            output,
            fail_on,
            select,
            ignore,
            show_progress=_wants_progress(files),
            junit_path=junit_path,
        )
    )


@cli.command("rules")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("table", "markdown")),
    default="table",
    show_default=True,
    help="markdown prints docs/rules.md.",
)
def rules_command(output_format: str) -> int:
    """List the rule catalogue: code, name, severity, title."""
    from kafkadiag.rules.registry import RULES

    if output_format == "markdown":
        from kafkadiag.rules.docs import render_markdown

        click.echo(render_markdown(), nl=False)
        return int(ExitCode.OK)
    from kafkadiag.report.output import report_stream
    from kafkadiag.report.rules_table import render_rules

    with report_stream(None, "table") as stream:
        render_rules(stream, RULES)
    return int(ExitCode.OK)


@cli.command("explain")
@click.argument("code")
def explain_command(code: str) -> int:
    """Print a rule's full text: what it detects, why it matters, what to do."""
    from kafkadiag.errors import UsageError
    from kafkadiag.rules.registry import rule_by_code

    rule = rule_by_code(code)
    if rule is None:
        raise UsageError(f"no rule {code!r}", help_text="`kafkadiag rules` lists the codes and names.")
    from kafkadiag.report.output import report_stream
    from kafkadiag.report.rules_table import render_explanation

    with report_stream(None, "table") as stream:
        render_explanation(stream, rule)
    return int(ExitCode.OK)


@cli.command("demo")
@click.option(
    "--scenario",
    type=click.Choice(("old-consumer", "python")),
    default="old-consumer",
    show_default=True,
    help="old-consumer: Kafka 0.8.2.2's old consumer, one connector over three topics, one handler "
    "hangs; python: a kafka-python consumer whose workers hang.",
)
@click.option("--keep", is_flag=True, help="Leave the sandbox running after the diagnosis (Ctrl-C stops it).")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("table", "json")),
    default="table",
    show_default=True,
    help="The diagnosis as `kafkadiag diagnose` prints it.",
)
def demo_command(scenario: str, keep: bool, output_format: str) -> int:
    """Reproduce a consumer stall on real Apache Kafka and diagnose it.

    Starts ZooKeeper, an Apache Kafka broker (0.8.2.2 for the old consumer, 3.9 for Python), live
    producers and a consumer on 127.0.0.1, shows them healthy, makes one handler hang, waits until
    the stall shows, runs `kafkadiag diagnose` against it and stops every process. Kafka's jars
    are fetched from Maven Central on first use. Needs a JDK, Maven and the sandbox extra
    (pip install 'kafkadiag[sandbox]'). The diagnosis goes to stdout, progress to stderr.
    """
    from kafkadiag.commands.demo import run_demo

    return run_demo(scenario, keep, output_format)


@cli.command("batch")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--out", "out_dir", required=True, help="A new directory for the results.")
@click.option("--master", default=None, help="Spark master URL (default: local[*], embedded).")
@input_bound_options
@click.option("--conf", multiple=True, help="A Spark setting KEY=VALUE (repeatable).")
@_rule_options(fail_on="error", example_prefix="KD2")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("table", "json")),
    default="table",
    show_default=True,
    help="What to print on stdout: one line, or summary.json.",
)
def batch_command(
    inputs: tuple[str, ...],
    out_dir: str,
    master: str | None,
    conf: tuple[str, ...],
    fail_on: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
) -> int:
    """Analyse many dumps, capture bundles and lag histories as a Spark job.

    INPUT...: files, directories or globs of thread dumps, `kafkadiag capture` bundles and
    `kafkadiag lag --record` snapshot files; local paths or URLs Spark reads (hdfs://, s3a://).
    Writes findings, stuck threads, lag over time, quarantined inputs, a summary and report.html
    into --out (docs/batch.md). Exit 0, 1 findings at or above --fail-on, 3 nothing readable.
    """
    from kafkadiag.commands.batch import run_batch_command

    return run_batch_command(
        inputs, out_dir, master, conf, fail_on, select, ignore, output_format, sys.stderr.isatty()
    )


@cli.command("ps")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("table", "json")),
    default="table",
    show_default=True,
    help="table for people, json for machines (schema kafkadiag.ps).",
)
def ps_command(output_format: str) -> int:
    """The Kafka consumer processes on this host: JVMs with Kafka client classes or jars (old and
    new consumers, Kafka Streams, Spring Kafka, Flink, Storm; a fat jar is recognised by its
    threads' names) and Python processes using kafka-python, confluent-kafka or aiokafka; with
    the group and client ids their command lines and config files name. Brokers and ZooKeeper
    servers are not listed. Reads /proc only: the processes are not touched."""
    from kafkadiag.commands.ps import run_ps

    return run_ps(output_format)


@cli.command("capture")
@click.option("--pid", type=int, required=True, help="The consumer process (a JVM or a Python interpreter).")
@click.option("--count", type=int, default=3, show_default=True, help="How many thread dumps.")
@click.option(
    "--interval",
    type=DURATION,
    default="2s",
    show_default=True,
    help="Time between dumps (500ms, 2s, 1m; a bare number is seconds).",
)
@click.option("--out", "out_dir", required=True, help="A new directory for the bundle.")
@click.option("--jstack", default=None, help="jstack to use (default: the target JVM's own, then PATH's).")
@click.option("--py-spy", "py_spy", default=None, help="py-spy to use (default: beside python, then PATH's).")
@click.option("--no-metrics", is_flag=True, help="Skip the JVM's fetcher metrics (no JMX agent started).")
def capture_command(
    pid: int,
    count: int,
    interval: float,
    out_dir: str,
    jstack: str | None,
    py_spy: str | None,
    no_metrics: bool,
) -> int:
    """Capture a consumer process for offline analysis: COUNT thread dumps (jstack -l for a JVM,
    py-spy for Python) INTERVAL seconds apart, each thread's CPU time at every dump, the fetcher
    metrics over the JVM's local JMX, and a manifest, into the bundle directory OUT.

    `kafkadiag dump analyze OUT`, `kafkadiag diagnose --from OUT` and `kafkadiag batch` read it.
    An existing non-empty OUT is refused (exit 2); a failure leaves no bundle (exit 3).
    """
    from kafkadiag.commands.capture import run_capture

    return run_capture(pid, out_dir, count, interval, jstack, py_spy, sys.stderr.isatty(), not no_metrics)


def _wants_progress(files: tuple[str, ...]) -> bool:
    if not sys.stderr.isatty():
        return False
    total = 0
    for path in files:
        try:
            total += os.path.getsize(path) if path != "-" else 0
        except OSError:
            continue
    return total >= PROGRESS_MIN_BYTES


class Terminated(BaseException):
    """SIGTERM, raised wherever the program is (as Ctrl-C raises KeyboardInterrupt), so that the
    clean-ups in `finally` and `except BaseException` run: a report's temporary file, a capture's
    staging directory, a batch's Spark session. Left to its default action, SIGTERM ended the
    process on the spot and left a `.kafkadiag-XXXX` file beside the report."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code instead of raising SystemExit."""
    try:
        result: Any = cli.main(args=argv, prog_name="kafkadiag", standalone_mode=False)
    except click.exceptions.Abort:  # Ctrl-C: click turns KeyboardInterrupt into Abort
        click.echo("kafkadiag: interrupted; nothing was reported.", err=True)
        return int(ExitCode.INTERRUPTED)
    except Terminated:
        click.echo("kafkadiag: stopped by SIGTERM before it finished; no report file was left.", err=True)
        return int(ExitCode.TERMINATED)
    except click.ClickException as error:
        error.show()
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

    traceback.print_exc()
    click.echo("kafkadiag: internal error (a bug). Please report it with the traceback above.", err=True)
    return int(ExitCode.INTERNAL_ERROR)


def console_main() -> None:
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


# ---- lag and check: committed offsets against high watermarks -------------------------------
# Connection options follow Kafka's tools (--bootstrap-server, --zookeeper, --command-config,
# --group, --all-groups, --topic); each has a KAFKADIAG_* environment variable as its default.

LAG_FORMATS = ("table", "json", "prometheus")

# lag --samples and check take their sampling interval the same way.
_sample_interval_option = click.option(
    "--interval",
    type=DURATION,
    default="10s",
    show_default=True,
    help="Time between samples (10s, 1m; a bare number is seconds).",
)


# Where Burrow's statuses are evaluated (lag --samples, lag history, check), as Burrow's
# evaluator allowed-lag setting.
_allowed_lag_option = click.option(
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


def _connection_options(command: Callable[..., Any]) -> Callable[..., Any]:
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
            help="Client properties file (SSL/SASL) as Kafka's tools take it. Env: KAFKADIAG_COMMAND_CONFIG.",
        ),
        click.option("--group", "groups", multiple=True, help="A consumer group (repeatable)."),
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
            expose_value=False,
            callback=_remember_zookeeper_setting,
            help="ZooKeeper TLS settings, Kafka's zookeeper.ssl.* properties with PEM files. "
            "Env: KAFKADIAG_ZK_TLS_CONFIG_FILE.",
        ),
        click.option(
            "--zk-jaas-file",
            expose_value=False,
            callback=_remember_zookeeper_setting,
            help="A JAAS file whose Client section (DigestLoginModule) logs in to ZooKeeper. "
            "Env: KAFKADIAG_ZK_JAAS_FILE; digest identity: KAFKADIAG_ZK_DIGEST=user:password.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@cli.command("diagnose")
@_connection_options
@click.option("--pid", "pids", type=int, multiple=True, help="A consumer process: its thread dump "
              "(jstack -l or py-spy) and, for a JVM, its fetcher metrics (repeatable).")  # fmt: skip
@click.option("--jmx", default=None, help="The consumer's remote JMX (host:port or service:jmx: URL).")
@click.option("--jolokia", default=None, help="The consumer's Jolokia agent URL.")
@click.option("--prometheus", default=None, help="The consumer's Prometheus JMX exporter URL or file.")
@click.option(
    "--from", "bundles", multiple=True, help="A capture bundle (kafkadiag capture) or dump file (repeatable)."
)
@_rule_options(fail_on="warning", example_prefix="KD8")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("table", "json", "prometheus")),
    default="table",
    show_default=True,
    help="table for people, json for machines (schema kafkadiag.diagnosis, docs/diagnose.md), "
    "prometheus (docs/prometheus.md).",
)
@click.option("--output", "-o", default=None, help="Write the report to this file (atomically).")
@_verbose_option
@input_bound_options
def diagnose_command(
    bootstrap_server: str | None,
    zookeeper: str | None,
    command_config: str | None,
    groups: tuple[str, ...],
    all_groups: bool,
    topics: tuple[str, ...],
    timeout: float,
    pids: tuple[int, ...],
    jmx: str | None,
    jolokia: str | None,
    prometheus: str | None,
    bundles: tuple[str, ...],
    fail_on: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    output: str | None,
) -> int:
    """One diagnosis from every source: committed offsets and ownership, the consumer's fetcher
    metrics, its thread dumps; joined by consumer id, fetcher and stream threads, partitions and
    queue fill into one story (which stream stopped, which fetcher it blocks, which topics starve,
    MaxLag against the checker lag) and one catalogue of findings (`kafkadiag rules`).

    Exit 0 healthy, 1 a finding at or above --fail-on, 3 a source could not be read.
    """
    from kafkadiag.app.diagnose import DiagnoseOptions
    from kafkadiag.commands.diagnose import run_diagnose

    target = None
    if bootstrap_server or zookeeper:
        target = lag_target(bootstrap_server, zookeeper, command_config, groups, all_groups, topics, timeout)
    options = DiagnoseOptions(
        lag_target=target, pids=pids, jmx=jmx, jolokia=jolokia, prometheus=prometheus, bundles=bundles,
        select=select, ignore=ignore, timeout_s=timeout,
    )  # fmt: skip
    return run_diagnose(options, output_format, output, fail_on)


# The consumer's own metrics, for `maxlag` and for the fetcher columns of `lag`. Full
# documentation: docs/maxlag.md.


def _metrics_source_options(command: Callable[..., Any]) -> Callable[..., Any]:
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
    for option in reversed(options):
        command = option(command)
    return command


def _metrics_source(options: dict[str, Any], timeout: float) -> Any:
    """The MetricsSource named by the options of `_metrics_source_options`, taken out of `options`
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


@cli.group("lag", invoke_without_command=True)
@_connection_options
@click.option(
    "--format",
    "output_format",
    type=click.Choice(LAG_FORMATS),
    default="table",
    show_default=True,
    help="table for people, json (schema kafkadiag.lag), prometheus (textfile collector).",
)
@click.option("--output", "-o", default=None, help="Write the report to this file (atomically).")
@click.option(
    "--samples",
    type=int,
    default=1,
    show_default=True,
    help="Snapshots to take; 2+ adds rates, time lag, time to catch up and Burrow statuses.",
)
@_sample_interval_option
@_allowed_lag_option
@click.option(
    "--watch",
    is_flag=True,
    help="Live view: re-evaluate every --interval until Ctrl-C "
    "(into a pipe or file: every refresh, one after another).",
)
@click.option(
    "--record",
    "record_dir",
    default=None,
    help="Append each snapshot as a JSON line to DIR/lag-snapshots.jsonl (see `lag history`).",
)
@_metrics_source_options
@exporter_options
@click.pass_context
def lag_command(
    ctx: click.Context,
    output_format: str,
    output: str | None,
    samples: int,
    interval: float,
    allowed_lag: int,
    watch: bool,
    record_dir: str | None,
    consumer_config: str | None,
    lag_threshold: int | None,
    **connection: Any,
) -> int | None:
    """Committed offsets, lag, owners and progress per group, topic and partition.

    Reads old-consumer groups from ZooKeeper (--zookeeper) and Kafka-stored groups from the
    brokers (--bootstrap-server); read-only. With a metrics source (--pid, --jmx, --jolokia,
    --prometheus) each partition also shows the consumer's own fetcher lag, the gap, its stream's
    queue fill and the client's verdict (as `kafkadiag maxlag`). Exit 0 when everything was read,
    3 when something could not be (flagged in the report). Full documentation: docs/lag.md.
    """
    if ctx.invoked_subcommand is not None:
        return None
    from kafkadiag.commands.lag import FetcherRequest, run_lag

    no_start_agent = connection["no_start_agent"]
    export = pop_exporter_options(connection, record_dir, watch, output)
    source = _metrics_source(connection, connection["timeout"])
    target = lag_target(**connection)
    fetcher_request = None
    if source is not None:
        fetcher_request = FetcherRequest(source, consumer_config, lag_threshold)
    elif consumer_config is not None or lag_threshold is not None or no_start_agent:
        raise click.UsageError(
            "--consumer-config, --lag-threshold and --no-start-agent need a metrics source: "
            "--pid, --jmx, --jolokia or --prometheus"
        )
    if export.serve is not None:
        from kafkadiag.exporter.run import run_serve
        from kafkadiag.exporter.scrapes import ServeOptions

        window = samples if samples > 1 else 10  # Burrow's default window
        serve = ServeOptions(
            export.min_interval_s, window, allowed_lag, export.cluster_name, record_dir, export.keep
        )
        return run_serve(target, export.serve, serve, fetcher_request)
    return reader_may_leave(
        lambda: run_lag(
            target,
            output_format,
            output,
            samples=samples,
            interval_s=interval,
            watch=watch,
            record_dir=record_dir,
            fetcher_request=fetcher_request,
            allowed_lag=allowed_lag,
            keep=export.keep,
            cluster_name=export.cluster_name,
        )
    )


@lag_command.command("history")
@click.argument("record_dir")
@click.option("--group", "groups", multiple=True, help="Only these groups (repeatable).")
@click.option(
    "--samples",
    type=int,
    default=10,
    show_default=True,
    help="Evaluate over the last N recorded snapshots (Burrow's default window is 10).",
)
@click.option(
    "--at",
    "at_ms",
    type=MOMENT,
    default=None,
    help="Evaluate as of this time (ISO 8601, e.g. 2026-11-25T03:00:00Z; no zone: local time).",
)
@_allowed_lag_option
@click.option("--format", "output_format", type=click.Choice(LAG_FORMATS), default="table", show_default=True)
@click.option("--output", "-o", default=None, help="Write the report to this file (atomically).")
def lag_history_command(
    record_dir: str,
    groups: tuple[str, ...],
    samples: int,
    at_ms: int | None,
    allowed_lag: int,
    output_format: str,
    output: str | None,
) -> int:
    """Evaluate snapshots recorded with `kafkadiag lag --record RECORD_DIR`, offline."""
    from kafkadiag.commands.lag import run_history

    return reader_may_leave(
        lambda: run_history(record_dir, groups, output_format, output, samples, allowed_lag, at_ms)
    )


@cli.command("check")
@_connection_options
@click.option("--max-lag", type=int, default=None, help="Most records a partition may lag.")
@click.option("--max-total-lag", type=int, default=None, help="Most records a group may lag in total.")
@click.option(
    "--max-time-lag",
    default=None,
    help="Oldest unconsumed record allowed (seconds, or 30s/5m/2h); needs --samples 2+.",
)
@click.option(
    "--worst-status",
    type=click.Choice(("OK", "WARN", "STOP", "STALL", "REWIND"), case_sensitive=False),
    default=None,
    help="Worst Burrow partition status allowed; needs --samples 2+.",
)
@click.option(
    "--fail-on-findings",
    type=click.Choice(("error", "warning", "info", "none")),
    default=None,
    help="Findings (ownership, skipped data ...) at this severity or above fail the check [error].",
)
@click.option(
    "--config", "config_path", default=None, help="Per group/topic thresholds (TOML or JSON, docs/lag.md)."
)
@click.option("--samples", type=int, default=1, show_default=True, help="Snapshots to take.")
@_sample_interval_option
@_allowed_lag_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("text", "json", "junit")),
    default="text",
    show_default=True,
    help="text, json (schema kafkadiag.check) or junit (XML).",
)
@click.option("--output", "-o", default=None, help="Write the report to this file (atomically).")
@click.option("--junit-xml", "junit_path", default=None, help="Also write a JUnit XML report to this file.")
def check_command(
    max_lag: int | None,
    max_total_lag: int | None,
    max_time_lag: str | None,
    worst_status: str | None,
    fail_on_findings: str | None,
    config_path: str | None,
    samples: int,
    interval: float,
    allowed_lag: int,
    output_format: str,
    output: str | None,
    junit_path: str | None,
    **connection: Any,
) -> int:
    """Check lag against thresholds: exit 0 healthy, 1 unhealthy, 3 could not check.

    Thresholds come from --config (defaults and per group/topic rules), overridden by the
    options given here. With no threshold at all, Burrow's statuses decide: a partition in STOP,
    STALL or REWIND (group status ERR) is unhealthy; one sample cannot judge a status, so that
    needs --samples 2 or more, else the result is 3. Reports: text, JSON or JUnit XML for CI
    systems. See docs/lag.md.
    """
    from kafkadiag.commands.check import load_policy, run_check, with_overrides
    from kafkadiag.lag.check import CheckPolicy, thresholds_from_mapping

    values: dict[str, object] = {}
    if max_lag is not None:
        values["max_lag"] = max_lag
    if max_total_lag is not None:
        values["max_total_lag"] = max_total_lag
    if max_time_lag is not None:
        values["max_time_lag"] = max_time_lag
    if worst_status is not None:
        values["worst_status"] = worst_status
    if fail_on_findings is not None:
        values["fail_on_findings"] = fail_on_findings
    try:
        overrides, fields = thresholds_from_mapping(values, "options")
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    policy = load_policy(config_path) if config_path else CheckPolicy()
    policy = with_overrides(policy, overrides, fields)
    target = lag_target(**connection)
    return run_check(target, policy, output_format, output, junit_path, samples, interval, allowed_lag)


# ---- maxlag ---------------------------------------------------------------------------------
# One metrics source (--pid, --jmx, --jolokia, --prometheus) plus, for the checker lag, the lag
# engine's connection options. Full documentation: docs/maxlag.md.


@cli.command("maxlag")
@_metrics_source_options
@_connection_options
@click.option("--client-id", "client_ids", multiple=True, help="Only these clients (repeatable).")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("table", "json", "prometheus")),
    default="table",
    show_default=True,
    help="table for people, json for machines (schema kafkadiag.maxlag, see docs/maxlag.md), "
    "prometheus (docs/prometheus.md).",
)
@click.option("--output", "-o", default=None, help="Write the report to this file (atomically).")
def maxlag_command(
    consumer_config: str | None,
    client_ids: tuple[str, ...],
    lag_threshold: int | None,
    output_format: str,
    output: str | None,
    **connection: Any,
) -> int:
    """The consumer's fetcher MaxLag against the checker's lag, and what the gap means.

    Reads the consumer's own metrics (MaxLag, per-partition fetcher lag, each stream's queue fill)
    from one source, the committed-offset lag from ZooKeeper/brokers, and per client says: healthy,
    streams not draining (a full queue, named), fetch-bound, or fetcher metrics stale/absent.
    Exit 0 healthy, 1 unhealthy, 3 could not read.
    """
    from kafkadiag.app.maxlag import CheckerTarget, MaxLagOptions
    from kafkadiag.collect.metrics import MetricsSource
    from kafkadiag.commands.maxlag import run_maxlag

    timeout = connection.pop("timeout")
    # No source at all is refused by MetricsSource.kind, with the others' usage errors.
    source = _metrics_source(connection, timeout) or MetricsSource(timeout_s=timeout)
    checker = CheckerTarget(
        bootstrap_servers=connection["bootstrap_server"],
        zookeeper=connection["zookeeper"],
        command_config=connection["command_config"],
        groups=connection["groups"],
        all_groups=connection["all_groups"],
        topics=connection["topics"],
        timeout_s=timeout,
        zookeeper_security=zookeeper_security(),
    )
    options = MaxLagOptions(source, checker, consumer_config, client_ids, lag_threshold)
    return reader_may_leave(lambda: run_maxlag(options, output_format, output))
