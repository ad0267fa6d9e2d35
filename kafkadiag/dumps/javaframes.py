"""Parse the text of one Java frame, as HotSpot and the serviceability agent print it."""

from __future__ import annotations

import re

from kafkadiag.digits import decimal, is_decimal
from kafkadiag.model import Frame

NATIVE_METHOD = "Native Method"

# A frame as StackTraceElement.toString() prints it, without "at ": jcmd's Thread.dump_to_file text
# of JDK 21 to 23, and applications printing Thread.getAllStackTraces() themselves.
# "java.base/java.lang.Thread.sleep0(Native Method)", "app//Main.main(Main.java:5)".
BARE_FRAME = re.compile(r"^[\w$.@/-]+\.[\w$<>-]+\(.*\)$")


def bare_frame_text(text: str) -> str | None:
    """The frame in a stripped line `at pkg.C.m(F.java:1)` or `pkg.C.m(F.java:1)`, else None."""
    if text.startswith("at "):
        text = text[3:].lstrip()
    return text if BARE_FRAME.match(text) else None


# Kafka's client relocated into another jar by a shading plugin, as agents and connectors ship it:
# "org.apache.skywalking.apm.dependencies.org.apache.kafka.clients.producer.KafkaProducer.send",
# "org.apache.flink.kafka.shaded.org.apache.kafka.clients.consumer.KafkaConsumer.poll". The rules
# know the client by its own names; the frame's text keeps the relocated one for quoting.
_RELOCATED_KAFKA = ".org.apache.kafka."


def unshaded(function: str) -> str:
    """`shaded.prefix.org.apache.kafka.X.m` -> `org.apache.kafka.X.m`; any other name as it is."""
    at = function.find(_RELOCATED_KAFKA)
    return function[at + 1 :] if at > 0 else function


def parse_java_frame(text: str) -> Frame:
    """Parse `pkg.Class.method(module@ver/File.java:123)` (the part after "at ").

    Forms seen in the wild: `(File.java:12)`, `(Native Method)`, `(Unknown Source)`,
    `(java.base@17.0.2/Thread.java:833)` (JDK 9+ module), `app//pkg.Class.method(...)` (a class
    loader name, from exception traces pasted into dumps), `(Compiled Code)` (JDK 1.4 and IBM).
    """
    open_paren = text.find("(")
    if text[-1:] != ")" and _CODE_ADDRESS.search(text):
        # JRockit 8.1 and R24 end a frame with its code's address: "...(Unknown Source)@0x00CCC763".
        return parse_java_frame(_CODE_ADDRESS.sub(")", text))._replace(text=text)
    if open_paren < 0 or not text.endswith(")"):
        stripped = text.rstrip()
        if stripped != text and stripped.endswith(")"):
            # Padded to the width of a rendered page (KAFKA-914's tracker pads every line).
            return parse_java_frame(stripped)
        close = text.find(")", open_paren)
        if open_paren > 0 and close > 0 and text[close + 1 : close + 2] in (" ", "\t"):
            # A note after the location: "<--- here", "// stuck", logback's "~[app.jar:1.0]".
            return parse_java_frame(text[: close + 1])
        return Frame(text=text, function=text.strip(), file=None, line=None)
    function = text[:open_paren]
    descriptor = _JVM_DESCRIPTOR.match(text, open_paren)
    if descriptor is not None:
        # JRockit: `jrockit/vm/Locks.monitorEnter(Ljava/lang/Object;)Ljava/lang/Object;(Unknown Source)`,
        # and with dots in WebLogic's dumps: `java.lang.Thread.doYield(Z)V(Native Method)`.
        open_paren = descriptor.end() - 1
    if "/" in function and "@" not in function and "//" not in function:
        method = function[function.rfind("/") + 1 :]
        if method.count(".") == 1 and not method.startswith("0x"):
            # A class named the JVM's way (JRockit, `java/lang/Object.wait`): slashes between
            # packages, not a module or class loader before a dotted class name.
            function = function.replace("/", ".")
    if "\\" in function:
        # "BigInteger.\<init\>", "do\_work": a Markdown renderer's escapes (the Apache Yetus
        # release notes of JIRA issues); the function is named as the JVM names it.
        function = function.replace("\\<", "<").replace("\\>", ">").replace("\\_", "_")
    location = text[open_paren + 1 : -1]
    module: str | None = None
    slash = function.rfind("/")
    if slash >= 0 and function.startswith("0x", slash + 1):
        # A hidden class ("Foo$$Lambda$12/0x0000000800c0b000.run"): that slash is the class's own.
        slash = function.rfind("/", 0, slash)
    if slash >= 0:
        # Class loader / module prefix on the method itself, as StackTraceElement.toString()
        # prints it: "app//com.x.Y.run", "java.base@17.0.2/java.lang.Thread.run".
        module = function[:slash].rstrip("/") or None
        function = function[slash + 1 :]
    function = unshaded(function)
    slash = location.rfind("/")
    if slash >= 0:
        module = location[:slash]
        location = location[slash + 1 :]
    if location == NATIVE_METHOD:
        return Frame(text, function, None, None, True, module)
    file, colon, line_text = location.rpartition(":")
    if colon and is_decimal(line_text):  # `Foo.java:1313²` is a file name, not a line number
        return Frame(text, function, file, int(line_text), False, module)
    file_name = location if location.endswith((".java", ".kt", ".scala", ".groovy")) else None
    return Frame(text, function, file_name, None, False, module)


_CODE_ADDRESS = re.compile(r"\)@(?:0x)?[0-9a-fA-F]+$")
# A method descriptor between the name and the location: `(JLjava/lang/Object;)Z` then `(`. A
# location never holds it: it has a space or a colon, or nothing follows it.
_JVM_DESCRIPTOR = re.compile(r"\([\w/.$;\[]*\)[\w/.$;\[]+\(")


def parse_agent_frame(text: str) -> Frame:
    """Parse a serviceability-agent frame (`jstack -F`, `jhsdb jstack`), after the "- ".

    `java.lang.Object.wait(long) @bci=0, line=502 (Interpreted frame)`: the parenthesis holds
    parameter types, not a location, and the line number, when known, follows `line=`.
    """
    head, _, tail = text.partition(" @bci=")
    open_paren = head.find("(")
    function = unshaded(head[:open_paren] if open_paren >= 0 else head)
    line: int | None = None
    marker = tail.find("line=")
    if marker >= 0:
        digits = tail[marker + 5 :].split(" ", 1)[0].rstrip(",")
        line = decimal(digits)
    native = "Native" in tail
    return Frame(text, function, None, line, native)
