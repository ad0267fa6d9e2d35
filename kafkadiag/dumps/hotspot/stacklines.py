"""Indented lines inside a dump: frames, state and lock lines, and lines hard wrapping cut."""

from __future__ import annotations

from kafkadiag.dumps import jrockit, marks
from kafkadiag.dumps.hotspot.builders import ThreadBuilder
from kafkadiag.dumps.hotspot.lifecycle import DumpLifecycle
from kafkadiag.dumps.hotspot.locklines import STRUCTURE_LINES, ParsedLockLine, parse_lock_line
from kafkadiag.dumps.hotspot.syntax import (
    AGENT_PRODUCER,
    CARRYING,
    JMX_SYNCHRONIZERS,
    MARKUP_ENDS,
    MAX_FRAME_CACHE,
    MOUNTED,
    SMR_LINES,
    STATE_LINE,
    SYNCHRONIZERS,
    THREADINFO_SYNCHRONIZERS,
)
from kafkadiag.dumps.javaframes import parse_agent_frame, parse_java_frame
from kafkadiag.dumps.rewrap import (
    address_rejoined,
    agent_frame_unfinished,
    fits,
    frame_unfinished,
    header_continues,
    header_unfinished,
    join_token,
    join_words,
    lock_class_missing,
    unbalanced,
)
from kafkadiag.model import (
    Frame,
    LockEvent,
    LockRef,
)
from kafkadiag.threadheader import (
    THREADINFO,
    parse_number,
)


class StackLines(DumpLifecycle):
    """Indented lines inside a dump: a thread's state, frames, lock lines and synchronizers, and the
    continuations of those that hard wrapping cut."""

    def _new_frame(self, frame_line: str) -> Frame:
        """Parse `\tat pkg.Class.method(...)` and remember it under the whole line."""
        text = frame_line[4:]
        if text[-1:] in MARKUP_ENDS:
            text = marks.without_trailing_markup(text)  # "...(Thread.java:748)```"
        frame = parse_java_frame(text)
        if len(self.frame_cache) >= MAX_FRAME_CACHE:
            self.frame_cache.clear()
        self.frame_cache[frame_line] = frame
        return frame

    def _after_lone_dash(self, line: str, line_no: int) -> str:
        """The rest of a lock line or agent frame whose "-" hard wrapping left on the line before."""
        dash_line_no, self.lone_dash = self.lone_dash, None
        if dash_line_no != line_no - 1 or self.thread is None or not line.strip():
            return line
        self._rejoined(self.thread, line_no)
        return "\t- " + line.strip()

    def _indented(self, line: str, body: str, line_no: int) -> None:
        thread = self.thread
        dump = self.dump
        assert dump is not None
        if not body:
            return
        if thread is not None and body.rstrip() == "-":
            self.lone_dash = line_no
            return
        if body.startswith(STATE_LINE) and (thread is None or thread.frames):
            # A state line with no header before it, or after another thread's stack: a thread
            # whose header the excerpt left out.
            thread = self._headerless_thread(body, line_no)
        if thread is None:
            if body.startswith(SMR_LINES[1:]):
                return  # SMR block of JDK 11+
            self._unparsed(line_no, line)
            return
        if body.startswith("- "):
            if thread.in_synchronizers:
                self._synchronizer(thread, body, line, line_no)
            elif " @bci=" in body or self._agent_frame_cut(thread, body):
                thread.frames.append(parse_agent_frame(body[2:]))
            else:
                self._lock_event(thread, body, line, line_no)
            return
        if body.startswith(STATE_LINE):
            thread.state_text = body[len(STATE_LINE) :]
            thread.state_line_no = line_no
            if not thread.frames:
                thread.stack_line_no = line_no + 1
            return
        if body.startswith(SYNCHRONIZERS):
            self._synchronizers_start(thread)
            return
        if body.startswith((THREADINFO_SYNCHRONIZERS, JMX_SYNCHRONIZERS)):
            self._synchronizers_start(thread)
            return
        if self._vm_line_in_stack(thread, body, line_no):
            return
        if self._rejoin(thread, line, line_no):
            return
        self._unparsed(line_no, line)

    def _vm_line_in_stack(self, thread: ThreadBuilder, body: str, line_no: int) -> bool:
        """Lines the VM or a tool prints inside a thread's block besides frames and lock lines:
        virtual-thread carriers, compiler tasks, JRockit's lock lines and WebLogic's frames."""
        dump = self.dump
        assert dump is not None
        if body == "...":
            return True  # ThreadInfo.toString() prints at most 8 frames, then this
        if body.startswith(CARRYING):
            thread.carried = parse_number(body[len(CARRYING) :].strip())
            thread.stack_line_no = line_no + 1
            return True
        if body.startswith(MOUNTED):
            self._mounted_virtual_thread(thread, body, line_no)
            return True
        if body.startswith(("JavaThread state:", "No compile task", "Compiling:")):
            # jhsdb's VM-internal state; JIT compiler threads' current task (JDK 9+).
            if not thread.frames:
                thread.stack_line_no = line_no + 1
            return True
        if body.startswith(jrockit.PASSED_OVER):
            return True
        if body.startswith(("-- ", "^-- ")) and self._jrockit_lock_line(thread, body, line_no):
            return True
        if dump.jrockit and jrockit.in_braces(thread.header) and body.rstrip().endswith(")"):
            thread.frames.append(parse_java_frame(body.rstrip()))  # WebLogic's layout: no "at "
            return True
        return False

    def _jrockit_lock_line(self, thread: ThreadBuilder, body: str, line_no: int) -> bool:
        parsed = jrockit.lock_line(body)
        if parsed is None:
            return False
        kind, lock_id, lock_class = parsed
        if not thread.frames:
            # JRockit names what a thread waits for above its first frame, where HotSpot's layout
            # has none: the frames' line numbers no longer follow from the stack's first line.
            thread.stack_line_no = 0
            thread.state_text = thread.state_text or jrockit.WAIT_STATES.get(kind)
        frame_index = max(len(thread.frames) - 1, 0)
        thread.events.append(LockEvent(kind, lock_id, lock_class, frame_index, line_no, body.strip()))
        return True

    def _rejoin(self, thread: ThreadBuilder, line: str, line_no: int) -> bool:
        """Join a line that hard wrapping cut off the one before it back to that line (only while
        the joined line stays within MAX_REJOINED_CHARS: each join copies it)."""
        adjacent = self.last_rejoined == line_no - 1
        events = thread.events
        if events and (events[-1].line_no == line_no - 1 or adjacent):
            last = events[-1]
            if fits(last.text, line) and (unbalanced(last.text) or lock_class_missing(last.text)):
                text = join_token(last.text, line)
                kind, lock_id, lock_class = parse_lock_line(text)
                if kind is None:
                    return False
                events[-1] = LockEvent(kind, lock_id, lock_class, last.frame_index, last.line_no, text)
                return self._rejoined(thread, line_no)
        if thread.in_synchronizers and thread.synchronizers:
            return self._rejoin_synchronizer(thread, line, line_no)
        frames = thread.frames
        event_after_frame = bool(events) and events[-1].frame_index >= len(frames) - 1 and bool(frames)
        if frames and not fits(frames[-1].text, line):
            return False
        if frames and not event_after_frame and self._agents_dump(thread):
            if agent_frame_unfinished(frames[-1].text):
                frames[-1] = parse_agent_frame(join_token(frames[-1].text, line))
                return self._rejoined(thread, line_no)
        elif frames and not event_after_frame and frame_unfinished(frames[-1].text):
            frames[-1] = parse_java_frame(join_token(frames[-1].text, line))
            return self._rejoined(thread, line_no)
        if frames:
            return False
        return self._rejoin_header(thread, line, line_no)

    def _rejoin_synchronizer(self, thread: ThreadBuilder, line: str, line_no: int) -> bool:
        """The rest of a "Locked ownable synchronizers" entry that hard wrapping cut."""
        assert thread.synchronizers
        synchronizers = thread.synchronizers
        last_held = synchronizers[-1]
        if fits(last_held.text, line) and (unbalanced(last_held.text) or lock_class_missing(last_held.text)):
            text = join_token(last_held.text, line)
            _, lock_id, lock_class = parse_lock_line(text)
            if lock_id is None:
                return False
            synchronizers[-1] = LockRef(lock_id, lock_class, last_held.line_no, text)
            return self._rejoined(thread, line_no)
        return False

    def _rejoin_header(self, thread: ThreadBuilder, line: str, line_no: int) -> bool:
        """The rest of a thread's header or state line that hard wrapping cut (no frame yet)."""
        if not fits(thread.header, line) or not fits(thread.state_text or "", line):
            return False
        threadinfo = " Id=" in thread.header
        address = address_rejoined(thread.header, line) if thread.state_text is None else None
        if address is not None:
            thread.header = address
            self._rejoined(thread, line_no)
            thread.stack_line_no = line_no + 1
            return True
        if thread.state_text is not None and not threadinfo:
            if unbalanced(thread.state_text):
                thread.state_text = join_words(thread.state_text, line)
                return self._rejoined(thread, line_no)
            return False
        if header_unfinished(thread.header) if threadinfo else header_continues(thread.header, line):
            thread.header = join_words(thread.header, line)
            info = THREADINFO.match(thread.header) if threadinfo else None
            if info is not None:
                thread.state_text = info["state"]
            self._rejoined(thread, line_no)
            thread.stack_line_no = line_no + 1
            return True
        return False

    def _rejoined(self, thread: ThreadBuilder, line_no: int) -> bool:
        assert self.dump is not None
        self.dump.rejoined += 1
        self.last_rejoined = line_no
        thread.stack_line_no = 0  # frame line numbers no longer follow from the layout
        return True

    def _synchronizers_start(self, thread: ThreadBuilder) -> None:
        thread.in_synchronizers = True
        thread.synchronizers = []
        assert self.dump is not None
        self.dump.has_lock_data = True

    def _parsed_lock_line(self, key: str, body: str) -> ParsedLockLine:
        """`body` (`- waiting to lock <0x..> (a pkg.Lock)`) parsed once per distinct `key` (the
        line as read): pool threads wait on and hold the same locks, dump after dump."""
        parsed = self.lock_line_cache.get(key)
        if parsed is None:
            if len(self.lock_line_cache) >= MAX_FRAME_CACHE:
                self.lock_line_cache.clear()
                self.lock_line_cache.update(STRUCTURE_LINES)
            kind, lock_id, lock_class = parse_lock_line(body)
            parsed = self.lock_line_cache[key] = (kind, lock_id, lock_class, key.strip())
        return parsed

    def _lock_event(self, thread: ThreadBuilder, body: str, line: str, line_no: int) -> None:
        # Keyed by the line as read (the hot loop looks it up the same way before calling here).
        kind, lock_id, lock_class, text = self._parsed_lock_line(line, body)
        if kind is None:
            assert self.dump is not None
            self._unparsed(line_no, line)
            return
        frame_index = max(len(thread.frames) - 1, 0)
        thread.events.append(LockEvent(kind, lock_id, lock_class, frame_index, line_no, text))

    def _synchronizer(self, thread: ThreadBuilder, body: str, line: str, line_no: int) -> None:
        rest = body[2:].strip()
        if rest == "None":
            return
        key = "- " + rest
        _, lock_id, lock_class, _ = self._parsed_lock_line(key, key)
        if lock_id is None:
            assert self.dump is not None
            self._unparsed(line_no, line)
            return
        assert thread.synchronizers is not None
        thread.synchronizers.append(LockRef(lock_id, lock_class, line_no, line.strip()))

    def _mounted_virtual_thread(self, carrier: ThreadBuilder, body: str, line_no: int) -> None:
        """JDK 21+: the carrier's stack is followed by the stack of the virtual thread it runs."""
        virtual_id = parse_number(body[len(MOUNTED) :].strip())
        self._finish_thread()
        virtual = ThreadBuilder(f"virtual thread #{virtual_id}", line_no, body.strip())
        virtual.state_text = carrier.state_text or "RUNNABLE"
        self.thread = virtual

    def _agents_dump(self, thread: ThreadBuilder) -> bool:
        """Frames in the serviceability agent's layout (`- pkg.C.m(args) @bci=N, line=L (...)`)."""
        if self.dump is not None and self.dump.producer == AGENT_PRODUCER:
            return True
        return any(" @bci=" in frame.text for frame in thread.frames)

    def _agent_frame_cut(self, thread: ThreadBuilder, body: str) -> bool:
        """An agent's frame that hard wrapping cut before its `@bci=`, not a lock line."""
        rest = body[2:].rstrip()
        cut = "(" in rest or ("." in rest and " " not in rest)  # cut inside, or before its "("
        return cut and parse_lock_line(body)[0] is None and self._agents_dump(thread)
