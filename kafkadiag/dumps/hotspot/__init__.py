"""HotSpot thread dumps: jstack [-l], jcmd Thread.print [-l], kill -3 output, JDK 5 to 25.

One pass over the lines, streaming: each dump is yielded as soon as the next one starts (or the
input ends), so a 200 MB log holding hundreds of dumps never sits in memory at once.

The parser is total. Every line inside a dump is either understood or kept as an unparsed
line with its number; lines between dumps (application logging around kill -3 output) are
skipped. Lines it recognises:

    2024-01-02 10:11:12                                   timestamp (before the banner)
    12345:                                                jcmd's pid line
    Full thread dump OpenJDK 64-Bit Server VM (...):      banner: a new dump starts
    Threads class SMR info: / _java_thread_list=... / }   JDK 11+ SMR block (and _to_delete_list=...
                                                          while a thread list is being freed)
    "name" #12 [345] daemon prio=5 os_prio=0 cpu=1.2ms elapsed=3.4s tid=0x.. nid=0x.. state [0x..]
       java.lang.Thread.State: WAITING (parking)
       Carrying virtual thread #N / Mounted virtual thread #N     JDK 21+ carriers
        at pkg.Class.method(File.java:12)                       frame
        - locked <0x..> (a pkg.Lock)                            lock event (six kinds)
        - java.lang.Object.wait(long) @bci=0, line=1 (...)      serviceability-agent frame
       Locked ownable synchronizers:  / - <0x..> (a ...) / - None
    JNI global references: N  /  JNI global refs: N, weak refs: M   footer
    Found one Java-level deadlock: ... Found N deadlock(s).     the JVM's deadlock report

The modules, by what they read (each parser class derives from the one above it):

    syntax.py      the markers, patterns and limits of the format
    locklines.py   lock lines -> kind, lock id, class
    builders.py    the thread and the dump being read, built into the model when complete
    lifecycle.py   DumpLifecycle: the parser's state; dumps and threads opening and closing
    stacklines.py  StackLines: state lines, frames, lock lines, synchronizers, wrapped lines
    headers.py     ThreadHeaders: the lines that open a thread, also cut or broken names
    report.py      DeadlockReport: the JVM's deadlock report
    sections.py    Sections: banners, footers, log text around dumps, fragments' ends
    parser.py      HotspotParser: the line state machine (its hot loop), parse_hotspot
"""

from __future__ import annotations

from kafkadiag.dumps.hotspot.locklines import parse_lock_id, parse_lock_line
from kafkadiag.dumps.hotspot.parser import CyclicGcPause, HotspotParser, parse_hotspot
from kafkadiag.dumps.hotspot.syntax import MIXED_NOTE, SIGNALS

__all__ = [
    "MIXED_NOTE",
    "SIGNALS",
    "CyclicGcPause",
    "HotspotParser",
    "parse_hotspot",
    "parse_lock_id",
    "parse_lock_line",
]
