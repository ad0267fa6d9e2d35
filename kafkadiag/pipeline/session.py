"""The Spark session a batch run uses: embedded local mode by default, any cluster with --master.

Executors run this interpreter (PYSPARK_PYTHON), so they import the same kafkadiag; on a cluster
kafkadiag's package is also shipped to them as a zip, so nodes without it installed run it too.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from kafkadiag.pipeline.classcache import driver_java_options, record_writer
from kafkadiag.readlimits import ENV_VARIABLES

DEFAULT_MASTER = "local[*]"
# Quiet, loopback-only, UTC: the job's output must not depend on the machine's timezone.
DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    # Local mode runs every task in the driver: the default 1 GB spills a 10^6-row history to disk.
    "spark.driver.memory": "2g",
}


# The driver's quick start: the client compiler alone reaches its (lower) peak in a fraction of the
# time, which is all a small job runs for; measured on 100 dump files: 6.9 s -> 5.8 s end to end.
QUICK_START_OPTIONS = ["-XX:TieredStopAtLevel=1"]


def start_session(
    master: str | None,
    conf: Sequence[tuple[str, str]],
    quick_start: bool = False,
    log_path: Path | None = None,
) -> Any:
    """`log_path`: where the JVM's own output goes (its launcher's warnings, Spark's log lines,
    the Python workers' stderr) instead of this process's terminal."""
    from kafkadiag.errors import SparkUnavailableError

    try:
        from pyspark.sql import SparkSession
    except ImportError as error:
        raise SparkUnavailableError("pyspark is not installed") from error
    # Under spark-submit the JVM is already launched with its own master: keep it.
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ and master is None
    master = master or DEFAULT_MASTER
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName("kafkadiag batch")
    if not submitted:
        builder = builder.master(master)
    settings = {**DEFAULT_CONF, **dict(conf)}
    # The input bounds (kafkadiag.readlimits) travel in the environment, which local executors
    # inherit; executors on a cluster's other hosts get them through Spark's setting for it.
    for name in ENV_VARIABLES:
        if os.environ.get(name):
            settings.setdefault(f"spark.executorEnv.{name}", os.environ[name])
    pending_archive = None
    if "spark.driver.extraJavaOptions" not in settings:
        cache_options, pending_archive = ([], None) if submitted else driver_java_options()
        settings["spark.driver.extraJavaOptions"] = " ".join(
            [
                f"-Dlog4j2.configurationFile={_quiet_log4j()}",
                *cache_options,
                *(QUICK_START_OPTIONS if quick_start and not submitted else []),
            ]
        )
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        with _jvm_output_to(log_path):
            session = builder.getOrCreate()
    except Exception as error:  # noqa: BLE001 - py4j and the JVM raise many kinds
        raise SparkUnavailableError(
            f"Spark did not start with --master {master}: {_first_line(error)}"
        ) from error
    session.sparkContext.setLogLevel("ERROR")
    gateway_process = getattr(session.sparkContext._gateway, "proc", None)
    if pending_archive is not None and gateway_process is not None:
        record_writer(pending_archive, gateway_process.pid)
    if not str(session.sparkContext.master).startswith("local"):
        session.sparkContext.addPyFile(str(_package_zip()))
    return session


@contextlib.contextmanager
def _jvm_output_to(log_path: Path | None) -> Iterator[None]:
    """PySpark starts the JVM with this process's stdout and stderr, which the JVM (and the
    Python workers it starts) keep for its life: pointing descriptors 1 and 2 at the log while
    it starts gives the JVM the log for good and this process its terminal back at once."""
    if log_path is None:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {descriptor: os.dup(descriptor) for descriptor in (1, 2)}
    try:
        with open(log_path, "ab") as log:
            for descriptor in saved:
                os.dup2(log.fileno(), descriptor)
        yield
    finally:
        for descriptor, original in saved.items():
            os.dup2(original, descriptor)
            os.close(original)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _quiet_log4j() -> Path:
    """Spark's own log lines (WARN at start-up, stage progress) would drown the progress bar."""
    path = Path(tempfile.gettempdir()) / "kafkadiag-spark-log4j2.properties"
    if not path.exists():
        path.write_text(
            "rootLogger.level = error\n"
            "rootLogger.appenderRef.stderr.ref = console\n"
            "appender.console.type = Console\n"
            "appender.console.name = console\n"
            "appender.console.target = SYSTEM_ERR\n"
            "appender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = spark: %p %c{1}: %m%n\n"
        )
    return path


def _package_zip() -> Path:
    import kafkadiag

    package = Path(kafkadiag.__file__).parent
    target = Path(tempfile.mkdtemp(prefix="kafkadiag-pyfiles-")) / "kafkadiag.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(package.rglob("*.py")):
            archive.write(path, str(path.relative_to(package.parent)))
    return target
