"""Why a JVM's metrics could not be read, each with what to do; all exit 3 (input unreadable)."""

from __future__ import annotations

from kafkadiag.errors import InputUnreadableError, UsageError

_OTHER_SOURCES = (
    "If the JVM cannot be attached to, read it another way: remote JMX (--jmx host:port, when it runs "
    "with -Dcom.sun.management.jmxremote.port), a Jolokia agent (--jolokia URL) or a Prometheus JMX "
    "exporter (--prometheus URL)."
)


class MetricsSourceError(InputUnreadableError):
    HELP_TEXT = "Check the metrics source option (--pid, --jmx, --jolokia, --prometheus)."


class JvmNotFoundError(MetricsSourceError):
    HELP_TEXT = "Check the PID (`jcmd -l` lists this user's JVMs; `ps -ef | grep java` all of them)."


class NotAJvmError(MetricsSourceError):
    HELP_TEXT = (
        "--pid takes the process id of a HotSpot JVM (`jcmd -l` lists them). kafkadiag checks this "
        "first because attaching sends SIGQUIT, which would terminate any other kind of process."
    )


class OtherUserError(MetricsSourceError):
    HELP_TEXT = (
        "The JDK lets only the JVM's own user (or root) attach to it. Run kafkadiag as that user, "
        "e.g. `sudo -u USER kafkadiag maxlag --pid PID ...`. " + _OTHER_SOURCES
    )


class AttachDisabledError(MetricsSourceError):
    HELP_TEXT = (
        "The JVM runs with -XX:+DisableAttachMechanism, so no tool (jcmd, jstack, kafkadiag) can attach "
        "to it. Restart it without that flag, or start it with -Dcom.sun.management.jmxremote (a local "
        "connector kafkadiag finds without attaching). " + _OTHER_SOURCES
    )


class JvmNotRespondingError(MetricsSourceError):
    HELP_TEXT = (
        "The JVM did not answer the attach request in time: it may be stopped (SIGSTOP), swapping, in a "
        "long GC pause, or in another container's /tmp. Raise --timeout, or take a thread dump with "
        "`kill -3 PID` (it goes to the JVM's stdout). " + _OTHER_SOURCES
    )


class JvmGoneError(MetricsSourceError):
    HELP_TEXT = (
        "The JVM exited while kafkadiag was reading it. Find the consumer's new PID (`jcmd -l`) and run "
        "again; check its logs for why it exited."
    )


class JmxUnreachableError(MetricsSourceError):
    HELP_TEXT = (
        "Check --jmx (host:port of com.sun.management.jmxremote.port, or a service:jmx: URL), that the "
        "port is reachable from this host, and that java.rmi.server.hostname on the JVM names an address "
        "this host can reach (RMI hands out a second address after the registry lookup). Raise --timeout "
        "on slow networks."
    )


class JmxAuthenticationError(MetricsSourceError):
    HELP_TEXT = (
        "The JMX agent requires credentials: set KAFKADIAG_JMX_USER and KAFKADIAG_JMX_PASSWORD "
        "(environment, so they do not show in `ps`) to a role from its jmxremote.access file; "
        "read-only access is enough."
    )


class HttpMetricsUnreachableError(MetricsSourceError):
    HELP_TEXT = (
        "Check the URL (Jolokia: http://host:8778/jolokia; JMX exporter: http://host:port/metrics), that "
        "the agent runs in the consumer's JVM and is reachable from this host; raise --timeout on slow "
        "networks."
    )


class JavaNotFoundError(MetricsSourceError):
    HELP_TEXT = (
        "Reading JMX needs a JDK 11 or later (java, and jcmd for --pid) on PATH or in $JAVA_HOME/bin. "
        "Install one (Debian: `apt-get install openjdk-17-jdk-headless`) or read a Jolokia agent or a "
        "Prometheus exporter instead."
    )


class MetricsSourceUsageError(UsageError):
    HELP_TEXT = (
        "Name one metrics source: --pid PID (a local JVM), --jmx URL|host:port, --jolokia URL, or "
        "--prometheus URL|FILE."
    )
