"""The text a HotSpot dump is made of: its markers, patterns and limits, shared by the readers."""

from __future__ import annotations

import re

# Unparsed lines kept per dump for display; all of them are counted.
MAX_UNPARSED_KEPT = 200
# Frame texts are interned so that identical frames across threads and dumps share one Frame;
# the cache is dropped when it grows past this, which keeps memory bounded on huge logs.
MAX_FRAME_CACHE = 200_000
MAX_STATE_TEXTS = 1024

BANNER = "Full thread dump"
STATE_LINE = "java.lang.Thread.State: "
# JDK 11+'s "Threads class SMR info:" block, before the threads. HotSpot adds _to_delete_list while a
# thread list is being freed (threads starting or ending as the dump is taken: real kafka-clients
# 4.1.1, fixtures/captured/real-new-consumer-shared-consumer-4.1.1).
SMR_LINES = ("Threads class SMR info", "0x", "_java_thread_list", "_to_delete_list", "}")
GREP_SEPARATOR = "--"
GREP_NOTE = (
    "grep -A/-B/-C output (its '--' lines separate the groups grep printed): each group is a fixed "
    "number of lines, so stacks may be cut and threads left out; a lock held, or the call a thread "
    "is blocked in, further down a stack is not in the input"
)
STATE_LINE_INDENTED = "   " + STATE_LINE
SYNCHRONIZERS_INDENTED = "   Locked ownable synchronizers:"
SYNCHRONIZERS = "Locked ownable synchronizers:"
THREADINFO_SYNCHRONIZERS = "Number of locked synchronizers = "
JMX_SYNCHRONIZERS = "Locked synchronizers: count = "
# TDA's own end marker after each dump it took over JMX.
END_OF_DUMP = "<EndOfDump>"
DEADLOCK_START = "Found one Java-level deadlock:"
REPORT_STACKS = "Java stack information for the threads listed above"
REPORT_WITHOUT_STACKS_NOTE = (
    "only the JVM's deadlock report, without the stacks of its threads: they are known by the names "
    "and locks the report gives, and the other threads of the dump are not in the input"
)
CARRYING = "Carrying virtual thread #"
MOUNTED = "Mounted virtual thread #"

# A line opening a thread in the JVM's deadlock report: `"name":` and nothing else.
REPORT_THREAD = re.compile(r'^"(?P<name>.*)":$')
# Serviceability agent (`jstack -F`, `jhsdb jstack`, JDK 5's jstack): "Thread 5987: (state = BLOCKED)"
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}")
TOOL_BANNER = re.compile(r"^Thread dump from (?P<tool>jcmd|jstack) (?P<pid>\d+)\b")
# The serviceability agent (`jhsdb jstack`, JDK 8's `jstack -F`) prints no "Full thread dump"
# banner but this preamble: attaching, the JVM's version, its own deadlock detection.
AGENT_PRODUCER = "jhsdb"
AGENT_BANNER = re.compile(r"^Attaching to (?:process ID (?P<pid>\d+)|core .*), please wait\.\.\.")
AGENT_PREAMBLE = re.compile(
    r"^(?:Debugger attached successfully\.|(?:Server|Client) compiler detected\.|JVM version is |"
    r"Deadlock Detection:|No deadlocks found\.)"
)
# `jhsdb jstack --mixed`: a line per OS thread between threads, and native frames by address.
MIXED_SEPARATOR = re.compile(r"^-{5,} \d+ -{5,}\s*$")
MIXED_NATIVE_FRAME = re.compile(r"^0x[0-9a-fA-F]+\t")
MIXED_NOTE = "jhsdb jstack --mixed: its native frames (by address) are left out; the Java frames are read"
JCMD_PID = re.compile(r"^(\d+):$")
DEADLOCK_COUNT = re.compile(r"^Found (?:\d+|one|no) (?:Java-level )?deadlocks?\.?")
# The lock's own address: "(object 0x...", "ownable synchronizer 0x...", and the serviceability
# agent's "(Object@0x..." (jhsdb jstack, JDK 17), not the address of the VM's monitor before it.
REPORT_LOCK_ID = re.compile(r"(?:object |synchronizer |Object@)(0x[0-9a-fA-F]+)")
# The heading of a class histogram (jmap -histo, -XX:+PrintClassHistogram on kill -3).
CLASS_HISTOGRAM = re.compile(r"^\s*num\s+#instances\s+#bytes\s+class name")
NAME_ONLY = re.compile(r'^"[^"]*"\s*$')
HEADER_FIELDS = re.compile(r"^\s*(?:#\d+ |daemon |prio=|os_prio=|tid=|nid=)")
HELD_BY = re.compile(r'which is held by "(?P<name>.*)"')
# A thread name with line breaks: at most this many lines, each this long. A line that opens a
# thread's block or stack is never part of a name.
MAX_NAME_LINES = 5
MAX_NAME_CHARS = 512
WRAPPED_NAME_CHARS = 40
# The narrowest column hard wrapping cuts at (mail clients 72-78, trackers and fold 60-80).
WRAP_WIDTH_AT_LEAST = 60
NOT_IN_A_NAME = ('"', "\t", "   java.lang.Thread.State", "Full thread dump", "JNI global")
# An entry of "Locked ownable synchronizers": jstack's "- <0x..>", and "- locked <..>" / "- Locked
# <..>" in the renderings of ThreadInfo that copy VisualVM's layout (Spring Boot Actuator's text).
HELD_ENTRY = ("- <", "- locked <", "- Locked <")

# IN_LOCK_CHAINS: JRockit's lock chains after the threads, up to the end of its dump.
OUTSIDE, IN_DUMP, IN_REPORT, IN_LOCK_CHAINS = 0, 1, 2, 3

# Log lines (outside the dumps) that tell what a dump cannot show; rules read them.
SIGNALS = (
    "KafkaConsumer is not safe for multi-threaded access",
    "CommitFailedException",
    "max.poll.interval.ms",
    "OutOfMemoryError",
)
MARKUP_ENDS = frozenset("`}")
