"""Apache Kafka's own releases, fetched from Maven Central and kept in the user's cache.

Each release the sandbox and the tests run is one small POM in `kafka_releases/` that names the
release's jars; Maven resolves it with the checksums Maven Central publishes (`--strict-checksums`)
and copies the jars into `<cache>/kafka/<version>/libs`. A release is fetched once, on first use,
and a later POM (another binding, another jar) fetches it again. A machine that can fetch nothing
gets a SandboxError (exit 3) that says what to install or where to put the jars.

    python -m kafkadiag.sandbox.kafka_release fetch [VERSION ...]   # all releases by default
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from kafkadiag.errors import SandboxError

POM_DIR = Path(__file__).resolve().parent / "kafka_releases"
# The releases kafkadiag is tested against, oldest first. 0.8.0-beta1 and 0.10.2.2 run only as old
# consumers, in the captured fixtures (fixtures/capture_real_kafka.py).
VERSIONS = ("0.8.0-beta1", "0.8.2.2", "0.9.0.1", "0.10.2.2", "1.1.1", "3.9.1", "4.1.1")
# Marks a complete copy; holds the digest of the POM it was resolved from.
COMPLETE_MARK = ".resolved-from"
MAVEN_TIMEOUT_S = 900.0
REACH_MAVEN = "Check that this machine reaches Maven Central (or a mirror set in ~/.m2/settings.xml)."


def cache_root() -> Path:
    """$KAFKADIAG_CACHE, else $XDG_CACHE_HOME/kafkadiag, else ~/.cache/kafkadiag."""
    explicit = os.environ.get("KAFKADIAG_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafkadiag"


def pom_path(version: str) -> Path:
    if version not in VERSIONS:
        raise SandboxError(
            f"Kafka {version} is not one of the releases kafkadiag runs ({', '.join(VERSIONS)})",
            help_text="Pick one of the listed releases.",
        )
    return POM_DIR / f"kafka-{version}.pom"


def libs_dir(version: str) -> Path:
    return cache_root() / "kafka" / version / "libs"


def _digest(pom: Path) -> str:
    return hashlib.sha256(pom.read_bytes()).hexdigest()


def is_resolved(pom: Path, target: Path) -> bool:
    """Whether `target` holds a complete copy of the jars this very POM names."""
    try:
        return (target / COMPLETE_MARK).read_text().strip() == _digest(pom)
    except OSError:
        return False


def is_fetched(version: str) -> bool:
    return is_resolved(pom_path(version), libs_dir(version))


def release_jars(version: str, notify: Callable[[str], None] | None = None) -> list[Path]:
    """The release's jars, fetched first when the cache does not hold them."""
    return pom_jars(pom_path(version), libs_dir(version), f"Apache Kafka {version}", notify)


def pom_jars(pom: Path, target: Path, label: str, notify: Callable[[str], None] | None = None) -> list[Path]:
    """The jars a POM names, resolved into `target` first when it does not hold them (the
    releases here, and the client applications of the fixtures' reproducers)."""
    if not is_resolved(pom, target):
        fetch_pom(pom, target, label, notify)
    return sorted(target.glob("*.jar"))


def classpath(version: str, notify: Callable[[str], None] | None = None) -> str:
    return os.pathsep.join(str(jar) for jar in release_jars(version, notify))


def fetch(version: str, notify: Callable[[str], None] | None = None) -> Path:
    return fetch_pom(pom_path(version), libs_dir(version), f"Apache Kafka {version}", notify)


def fetch_pom(pom: Path, target: Path, label: str, notify: Callable[[str], None] | None = None) -> Path:
    """Resolve a POM with Maven into `target`; the copy appears whole or not at all."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SandboxError(
            f"{label} is not in {target} and Maven (mvn) is not on PATH to fetch it",
            help_text=(
                "Install Maven (it fetches Kafka's jars from Maven Central with their checksums), "
                f"or copy the jars that {pom} names into {target} on a machine that has them."
            ),
        )
    (notify or _to_stderr)(f"kafkadiag: fetching {label} from Maven Central (once) ...")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".libs-", dir=target.parent))
    try:
        argv = [
            mvn,
            "-B",
            "-q",
            "--strict-checksums",
            # Maven 3.8 colours its output even in batch mode; the tail is quoted in errors.
            "-Dstyle.color=never",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={staging}",
        ]
        try:
            result = subprocess.run(
                argv, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            raise SandboxError(
                f"Maven did not fetch {label} within {MAVEN_TIMEOUT_S:g}s", help_text=REACH_MAVEN
            ) from None
        if result.returncode != 0 or not any(staging.glob("*.jar")):
            tail = (result.stdout + result.stderr).strip().splitlines()[-12:]
            raise SandboxError(
                f"Maven could not fetch {label} (exit {result.returncode}):\n" + "\n".join(tail),
                help_text=REACH_MAVEN,
            )
        (staging / COMPLETE_MARK).write_text(_digest(pom) + "\n")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr)


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "fetch":
        print("usage: python -m kafkadiag.sandbox.kafka_release fetch [VERSION ...]", file=sys.stderr)
        return 2
    try:
        for version in argv[1:] or VERSIONS:
            jars = release_jars(version)
            print(f"Apache Kafka {version}: {len(jars)} jars in {libs_dir(version)}")
    except SandboxError as error:
        print(f"kafkadiag: {error}\n{error.help_text}", file=sys.stderr)
        return int(error.exit_code)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
