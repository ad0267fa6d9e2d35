"""Which parser reads which of the JVM renderings that are not HotSpot's own layout."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from kafkadiag.model import DumpFormat, ThreadDump

Parser = Callable[[Iterable[list[str]], str], Iterator[ThreadDump]]


def parser_for_other_jvm(fmt: DumpFormat) -> Parser:
    if fmt is DumpFormat.JCMD_TEXT:
        from kafkadiag.dumps.jcmdtext import parse_jcmd_text

        return parse_jcmd_text
    if fmt is DumpFormat.JCMD_JSON:
        from kafkadiag.dumps.jcmdjson import parse_jcmd_json

        return parse_jcmd_json
    if fmt is DumpFormat.INTELLIJ:
        from kafkadiag.dumps.intellij import parse_intellij

        return parse_intellij
    if fmt is DumpFormat.JAVACORE:
        from kafkadiag.dumps.javacore import parse_javacore

        return parse_javacore
    if fmt is DumpFormat.ANDROID_ANR:
        from kafkadiag.dumps.androidanr import parse_android_anr

        return parse_android_anr
    if fmt is DumpFormat.ACTUATOR_JSON:
        from kafkadiag.dumps.actuatorjson import parse_actuator_json

        return parse_actuator_json
    if fmt is DumpFormat.JCONSOLE:
        from kafkadiag.dumps.jconsole import parse_jconsole

        return parse_jconsole
    if fmt is DumpFormat.STACK_TRACES:
        from kafkadiag.dumps.stacktraces import parse_stack_traces

        return parse_stack_traces
    if fmt is DumpFormat.GOCD_SUPPORT:
        from kafkadiag.dumps.gocdsupport import parse_gocd_support

        return parse_gocd_support
    raise ValueError(f"no parser for {fmt.value}")
