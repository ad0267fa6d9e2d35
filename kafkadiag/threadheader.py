"""The numbers in a thread's header line, read when someone asks for them.

A thread header carries a dozen fields (ids, priorities, CPU time), but most uses of a dump
(grouping stacks, lock graphs, the stall rules) never look at them. Parsing them for every thread
up front was a third of the parse time of a large dump, so the model keeps the header text and
this module reads it on first access (cached, as a report usually reads several fields).

Header forms:
    "name" #12 [345] daemon prio=5 os_prio=0 cpu=1.20ms elapsed=3.40s tid=0x.. nid=0x.. state [0x..]
    "name" daemon prio=10 tid=0x.. nid=0x.. waiting on condition [0x..]      (JDK 5 to 8)
    "name" - Thread t@12                                                      (VisualVM)
    "name" daemon prio=5 Id=12 WAITING on java.lang.Object@1b2c3d               (ThreadInfo)
    Thread 5987: (state = BLOCKED)                                            (jstack -F)
    Mounted virtual thread #206                                               (JDK 21+)
    Thread 2137 (idle+gil): "MainThread"                                      (py-spy)
    #24 "name" virtual BLOCKED 2026-11-25T06:37:32Z                           (jcmd Thread.dump_to_file)
    Thread 0x00007f1b... (most recent call first):                            (faulthandler)
    Thread 4 (Thread 0x7f5f... (LWP 27352) "python3.11"):                     (gdb py-bt)
    # Thread: worker-0(1396...)   <Thread(worker-0, started daemon 1396...)>  (traceback)
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from kafkadiag.digits import all_ascii_digits, decimal, decimal_fraction, is_decimal, signed_decimal


class HeaderFields(NamedTuple):
    java_id: int | None = None
    daemon: bool = False
    priority: int | None = None
    os_priority: int | None = None
    cpu_ms: float | None = None
    elapsed_s: float | None = None
    tid: int | None = None  # JVM thread pointer
    nid: int | None = None  # OS thread id (Linux TID)
    virtual: bool = False
    active: bool | None = None  # py-spy only
    owns_gil: bool | None = None  # py-spy only


# After the quoted name, in this order, each optional (JDK 6 to 25).
HOTSPOT_TAIL = re.compile(
    r"(?: #(?P<java_id>\d+))?"  # java thread id (JDK 9+)
    r"(?: \[(?P<ostid>\d+)\])?"  # OS thread id (JDK 19+)
    r"(?P<daemon> daemon)?"
    r"(?P<virtual> virtual)?"
    r"(?: prio=(?P<prio>-?\d+))?"
    r"(?: os_prio=(?P<os_prio>-?\d+))?"
    r"(?: cpu=(?P<cpu>[\d.]+)ms)?"  # JDK 11+
    r"(?: elapsed=(?P<elapsed>[\d.]+)s)?"
    r"(?: allocated=\S+)?"  # jcmd Thread.print -e
    r"(?: defined_classes=\d+)?"
    r"(?: tid=(?P<tid>\S+))?"
    r"(?: nid=(?P<nid>\S+))?"
    r" *(?P<state>[^\[]*)"  # state words, then the stack address in brackets
)
# Jenkins' thread dump page adds the thread group: "main" Id=1 Group=main WAITING on ...
THREADINFO = re.compile(
    r'"(?P<name>.*?)"(?P<daemon> daemon)?(?: prio=(?P<prio>\d+))? Id=(?P<java_id>\d+)(?: Group=.*?)? '
    # Arthas' `thread` command adds its CPU sampling: "Id=76 cpuUsage=98.54% deltaTime=203ms time=1012ms"
    r"(?:(?:cpuUsage|deltaTime|time)=\S+ )*"
    r"(?P<state>[A-Z][A-Z_]+)\b(?P<rest>.*)$"
)
AGENT = re.compile(r"^Thread (?:t@)?(?P<nid>\d+): \(state = (?P<state>[A-Z_]+)\)")
# JRockit as WebLogic prints its dumps (weblogic.Admin THREAD_DUMP, the server's log), 8.1 to R27:
# `Thread-0x80 "Main Thread" <Waiting, priority=5, DAEMON> {`, the stack, then `}`.
JROCKIT_BRACES = re.compile(r'^Thread-(?P<id>(?:0x)?[0-9a-fA-F]+) "(?P<name>.*)" <(?P<words>[^<>]*)> \{\s*$')
# py-spy's thread id: Python's ident in hex, or the OS thread id. Tutorials and bug reports elide
# it ("Thread 0x7F... (active)"); such a thread has no id.
PYSPY_THREAD_ID = r"0x[0-9A-Fa-f]+(?:\.\.\.|\u2026)?|\d+"
# The name may hold line breaks (Thread(name="a\nb")): py-spy prints it as it is.
PYSPY = re.compile(rf'^Thread (?P<id>{PYSPY_THREAD_ID}) \((?P<flags>[^)]*)\)(?:: "(?P<name>[\s\S]*)")?\s*$')
# `py-spy dump --core`: a core file says nothing of activity, only who holds the GIL.
PYSPY_CORE = re.compile(r'^Thread (?P<id>\d+)(?: \((?P<flags>gil)\))?: "(?P<name>.*)"\s*$')
# Python's thread ident (pthread_self) and, from gdb, the Linux thread id, in the other Python
# formats' headers: faulthandler and gevent print the ident in hex, the traceback recipes in decimal.
PYTHON_IDENT = re.compile(
    r"^(?:Current thread|Thread) (?P<hex>0x[0-9a-fA-F]+) \(|"
    r"^Thread \d+ \(Thread (?P<pthread>0x[0-9a-fA-F]+) \(LWP (?P<lwp>\d+)\)|"
    r"^# Thread: .*\((?P<recipe>\d+)\)\s*$|^# ThreadID: (?P<recipe_id>\d+)|"
    r"<\w+\(.*, (?:started|initial|stopped)(?: daemon)? (?P<repr>\d+)\)>"
)
MOUNTED = "Mounted virtual thread #"
# jcmd Thread.dump_to_file (JDK 21+): `#24 "name" virtual BLOCKED 2026-...Z`
DUMP_TO_FILE = re.compile(r'^#(?P<tid>\d+) ".*"(?P<virtual> virtual)?(?: [A-Z_]+)?(?: \S+)?$')
VISUALVM = " - Thread t@"


# A number printed with thousands separators, as a dump page's template renders ids (TeamCity).
_GROUPED_DIGITS = re.compile(r"^\d{1,3}(?:,\d{3})+$")


def parse_number(text: str | None) -> int | None:
    """Thread pointers and nids: `0x7f..`, hex without 0x (OS X JDK 6), decimal (JDK 19+ nid)."""
    if not text or text == "NA":
        return None
    if _GROUPED_DIGITS.match(text):
        return int(text.replace(",", ""))  # decimal with thousands separators: `nid=8,057,104`
    try:
        if text.startswith(("0x", "0X")):
            return int(text, 16)
        if all_ascii_digits(text):
            return decimal(text)
        return int(text, 16)
    except ValueError:
        return None


def parse_pointer(text: str | None) -> int | None:
    """A `tid=`: the JVM's thread pointer, always hex; Apple's JDK 6 prints it without `0x`, also
    when no digit of it is a letter (`tid=105002800`)."""
    if not text or text.startswith(("0x", "0X")) or _GROUPED_DIGITS.match(text):
        return parse_number(text)
    try:
        return int(text, 16)
    except ValueError:
        return None


def name_end(header: str) -> int:
    """Index of the quote closing a HotSpot thread name: the last quote on the line (a name may
    hold quotes), or the last before a `group="main"` field (TeamCity's thread dump page)."""
    end = header.rfind('"')
    group = header.find(GROUP_FIELD)
    if 0 < group < end:
        return header.rfind('"', 0, group)
    return end


GROUP_FIELD = ' group="'
# Fields in another order or spacing than HotSpot's (hand-edited dumps, other tools): read one by one.
_LOOSE_FIELD = re.compile(r"(?:^|\s)(?P<key>prio|os_prio|tid|nid)=(?P<value>\S+)")


@functools.lru_cache(maxsize=4096)
def header_fields(header: str) -> HeaderFields:
    if header.startswith('"'):
        return _quoted_header(header)
    if header.startswith(MOUNTED):
        virtual_id = header[len(MOUNTED) :].strip()
        return HeaderFields(java_id=decimal(virtual_id), virtual=True)
    pyspy = PYSPY.match(header) or PYSPY_CORE.match(header)
    if pyspy:
        identifier = pyspy["id"]
        flags = pyspy["flags"] or ""
        hexadecimal = identifier.startswith("0x")
        return HeaderFields(
            nid=None if hexadecimal else decimal(identifier),
            tid=int(identifier, 16) if hexadecimal and identifier[-1] not in ".\u2026" else None,
            active="active" in flags if "active" in flags or "idle" in flags else None,
            owns_gil="gil" in flags,
        )
    agent = AGENT.match(header)
    if agent:
        return HeaderFields(nid=decimal(agent["nid"]))
    braces = JROCKIT_BRACES.match(header)
    if braces:
        words = braces["words"]
        priority = re.search(r"priority=(\d+)", words)
        return HeaderFields(
            tid=parse_number(braces["id"]),
            daemon="DAEMON" in words,
            priority=decimal(priority[1]) if priority else None,
        )
    dump_to_file = DUMP_TO_FILE.match(header)
    if dump_to_file:
        return HeaderFields(java_id=decimal(dump_to_file["tid"]), virtual=dump_to_file["virtual"] is not None)
    python = PYTHON_IDENT.search(header)
    if python:
        hex_ident = python["hex"] or python["pthread"]
        decimal_ident = python["recipe"] or python["recipe_id"] or python["repr"]
        return HeaderFields(
            tid=int(hex_ident, 16) if hex_ident else decimal(decimal_ident),
            nid=decimal(python["lwp"]),
        )
    return HeaderFields()


def _quoted_header(header: str) -> HeaderFields:
    if " Id=" in header:
        info = THREADINFO.match(header)
        if info:
            return HeaderFields(
                java_id=decimal(info["java_id"]),
                daemon=info["daemon"] is not None,
                priority=decimal(info["prio"]),
            )
    tail = _tail(header)
    if tail is None:
        return HeaderFields()
    fields, state = tail
    java_id, prio, os_prio, cpu, elapsed = (
        fields[k] for k in ("java_id", "prio", "os_prio", "cpu", "elapsed")
    )
    if state.startswith("- Thread t@"):
        number = state[len("- Thread t@") :].split(" ", 1)[0]
        java_id = number if is_decimal(number) else java_id
    nid, ostid = fields["nid"], fields["ostid"]
    return HeaderFields(
        # A field that is not a number (prio=M9 from a loose match, cpu=0..4ms) is as if absent.
        java_id=decimal(java_id),
        daemon=fields["daemon"] is not None,
        priority=signed_decimal(prio),
        os_priority=signed_decimal(os_prio),
        cpu_ms=decimal_fraction(cpu),
        elapsed_s=decimal_fraction(elapsed),
        tid=parse_pointer(fields["tid"]),
        # Carrier threads of virtual threads print [ostid] but no nid=.
        nid=parse_number(nid) if nid else decimal(ostid),
        # IntelliJ's export puts the word after nid=NA: "@960" tid=0x19 nid=NA virtual runnable
        virtual=fields["virtual"] is not None or state.startswith("virtual "),
    )


def state_words(header: str) -> str:
    """The header's own state words ("waiting on condition"), for dumps without a state line."""
    tail = _tail(header)
    return tail[1].rstrip() if tail else ""


def _tail(header: str) -> tuple[dict[str, str | None], str] | None:
    """The fields after the name (HOTSPOT_TAIL's groups, by name) and the state words. Fields
    HotSpot's pattern misses (another order, runs of spaces, a `group="main"` between them) are
    read one by one, and the state words are what follows the last of them."""
    end = name_end(header)
    match = HOTSPOT_TAIL.match(header, end + 1)
    if match is None:
        return None
    fields = match.groupdict()
    state: str = fields.pop("state") or ""
    if fields["prio"] is None and fields["tid"] is None and fields["nid"] is None:
        last = None
        for last in _LOOSE_FIELD.finditer(header, end + 1):
            fields[last["key"]] = last["value"]  # named as HOTSPOT_TAIL's groups
        if last is not None:
            state = header[last.end() :].split("[", 1)[0].strip()
    return fields, state


# A header pasted without its opening quote (SPARK-9529's `pool-1-thread-1" prio=5 tid=0x.. nid=..`):
# one quote, right after the name, then HotSpot's fields. A log prefix before a quoted name leaves
# two quotes on the line, so it is never mistaken for one.
_LOST_OPENING_QUOTE = re.compile(r'^[^"\s][^"]*" (?:#\d+ |daemon |prio=|os_prio=|tid=)')


def lost_opening_quote(line: str) -> bool:
    """A HotSpot header whose opening quote was lost when it was pasted."""
    return line.count('"') == 1 and _LOST_OPENING_QUOTE.match(line) is not None


# The ThreadMXBean dump some tools print over JMX (TDA's, a console's): `"name" id=3149 in RUNNABLE`.
JMX_HEADER = re.compile(r'^"(?P<name>.*)" id=(?P<java_id>\d+) in (?P<state>[A-Z_]+)\b')


def looks_like_hotspot_header(header: str) -> bool:
    """A quoted name followed by at least one HotSpot field, not a log line starting with a quote.

    Every HotSpot since 1.4 prints prio= and tid= (JDK 9+ also #id); VisualVM prints t@N.
    """
    end = name_end(header)
    if end <= 0:
        return False
    tail = header[end + 1 :]
    return (
        " prio=" in tail
        or " os_prio=" in tail  # JVM-internal threads; or a header cut before its tid=
        or " tid=" in tail
        or " nid=" in tail
        or tail.startswith((" #", VISUALVM))
        or " Id=" in header
        or (" id=" in tail and JMX_HEADER.match(header) is not None)
    )
