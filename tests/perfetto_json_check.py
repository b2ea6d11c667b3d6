#!/usr/bin/env python3
"""Checks a Perfetto JSON (Chrome trace-event) file against the importer's rules
(docs/outputs.md, "What Perfetto's importer needs") and proftrace's own conventions.

    perfetto_json_check.py TRACE.json [MORE.json ...] [--max-errors N] [--summary]

Exit status 0 when every rule holds in every file, 1 with one line per
violation otherwise, 2 when a file cannot be read or parsed at all.

Rules (each violation names the event by its index in traceEvents):
  - the document is {"traceEvents": [...]} or a bare array of event objects;
    NaN/Infinity and duplicate keys are rejected
  - ph is one of X B E i I C b e n s t f M
  - pid and tid are integers in 0..2^32-1 on every event
  - ts (and dur on X) are written from integer ns as "<us>.<3 digits>"; dur >= 0
  - M events are only process_name / thread_name (args.name a non-empty
    string) or process_sort_index / thread_sort_index (args.sort_index an
    integer)
  - flows: bind_id only on X/B events together with flow_out or flow_in;
    every bind_id has exactly one flow_out and one flow_in, and the flow_in
    slice does not start before the flow_out slice (the importer drops a flow
    whose end sorts before its start); s/f flows pair by (id, cat, name)
  - GPU events (category kernel, gpu_memcpy, gpu_memset, gpu_user_annotation
    as Kineto names them, or one starting with "gpu") are on a synthetic pid
    >= 2^22 (outside the Linux pid range)
  - every pid with events has a process_name; every track with GPU events
    has a thread_name (its tid is synthetic and means nothing by itself)
  - X slices on one track (pid, tid) nest: a slice starting inside another
    ends inside it; B/E balance per track
  - instant scope s is t, p or g; C args are numbers; args is an object
  - the GPU work holds the invariants of perfetto/gpu_invariants.py: no
    operation starts before the call that launched it, one operation at a
    time per stream (--no-gpu-invariants: not checked)
"""

import argparse
import json
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "perfetto"))
import gpu_invariants  # noqa: E402
from pftrace_check import json_events  # noqa: E402

PHASES = set("XBEiICbenstfM")
METADATA_NAMES = {"process_name", "thread_name", "process_sort_index", "thread_sort_index"}
LINUX_PID_LIMIT = 1 << 22
UINT32_MAX = (1 << 32) - 1
GPU_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}
TIMESTAMP = re.compile(r"^-?[0-9]+\.[0-9]{3}$")


class Number:
    """A JSON number kept as its source text, so the ts format can be checked."""

    def __init__(self, text):
        self.text = text

    def is_integer(self):
        return re.fullmatch(r"-?[0-9]+", self.text) is not None

    def value(self):
        return int(self.text) if self.is_integer() else float(self.text)


def reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def reject_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        duplicates = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"duplicate keys in an object: {duplicates}")
    return dict(pairs)


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8")  # raises on invalid UTF-8
    return json.loads(
        text,
        parse_int=Number,
        parse_float=Number,
        parse_constant=reject_constant,
        object_pairs_hook=reject_duplicate_keys,
    )


def ts_ns(number):
    """'12.345' microseconds -> 12345 ns (exact, no floats)."""
    text = number.text
    negative = text.startswith("-")
    whole, fraction = text.lstrip("-").split(".")
    ns = int(whole) * 1000 + int(fraction)
    return -ns if negative else ns


class Checker:
    def __init__(self, max_errors):
        self.errors = []
        self.max_errors = max_errors
        self.error_count = 0

    def error(self, index, message):
        self.error_count += 1
        if len(self.errors) < self.max_errors:
            where = f"event {index}" if index is not None else "document"
            self.errors.append(f"{where}: {message}")

    def check(self, document):
        if isinstance(document, dict):
            events = document.get("traceEvents")
            if not isinstance(events, list):
                self.error(None, 'top-level object has no "traceEvents" array')
                return {}
        elif isinstance(document, list):
            events = document
        else:
            self.error(None, "top level is neither an object nor an array")
            return {}

        named_processes = set()
        named_threads = set()
        used_pids = {}
        used_tracks = {}
        gpu_tracks = {}
        flows_out = defaultdict(list)  # bind_id -> [(index, ts_ns)]
        flows_in = defaultdict(list)
        v1_flow_starts = defaultdict(list)
        v1_flow_ends = defaultdict(list)
        slices = defaultdict(list)  # (pid, tid) -> [(start, end, index)]
        open_begins = defaultdict(list)

        for index, event in enumerate(events):
            if not isinstance(event, dict):
                self.error(index, "is not an object")
                continue
            if not event:
                continue  # {} is a tolerated filler
            ph = event.get("ph")
            if not isinstance(ph, str) or ph not in PHASES:
                self.error(index, f"ph {ph!r} is not a phase the importer supports")
                continue

            pid = self.check_id(index, event, "pid")
            tid = self.check_id(index, event, "tid")
            if "args" in event and not isinstance(event["args"], dict):
                self.error(index, "args is not an object")
            args = event.get("args") if isinstance(event.get("args"), dict) else {}

            if ph == "M":
                self.check_metadata(index, event, args, pid, tid, named_processes, named_threads)
                continue

            ts = self.check_time(index, event, "ts")
            dur = self.check_time(index, event, "dur") if ph == "X" else None
            if ph == "X" and dur is not None and dur < 0:
                self.error(index, "X event has a negative dur")
            if ph in "XiI" and (not isinstance(event.get("name"), str) or not event.get("name")):
                self.error(index, f"{ph} event has no name")

            if pid is not None:
                used_pids.setdefault(pid, index)
                if tid is not None:
                    used_tracks.setdefault((pid, tid), index)
            category = event.get("cat", "")
            if isinstance(category, str) and (category in GPU_CATEGORIES or category.startswith("gpu")):
                if pid is not None and tid is not None:
                    gpu_tracks.setdefault((pid, tid), index)
                if pid is not None and pid < LINUX_PID_LIMIT:
                    self.error(index, f"GPU event on pid {pid}, inside the Linux pid range (< 2^22)")

            if ph in "iI" and "s" in event and event["s"] not in ("t", "p", "g"):
                self.error(index, f"instant scope {event['s']!r} is not t, p or g")
            if ph == "C":
                if not args:
                    self.error(index, "counter event without args")
                for key, value in args.items():
                    if not isinstance(value, Number):
                        self.error(index, f"counter arg {key!r} is not a number")

            self.collect_flows(index, event, ph, ts, flows_out, flows_in, v1_flow_starts, v1_flow_ends)

            if pid is None or tid is None or ts is None:
                continue
            track = (pid, tid)
            if ph == "X" and dur is not None and dur >= 0:
                slices[track].append((ts, ts + dur, index))
            elif ph == "B":
                open_begins[track].append(index)
            elif ph == "E":
                if not open_begins[track]:
                    self.error(index, f"E without a matching B on track pid {pid} tid {tid}")
                else:
                    open_begins[track].pop()

        for track, begins in open_begins.items():
            for index in begins:
                self.error(index, f"B never ended on track pid {track[0]} tid {track[1]}")
        self.check_flows(flows_out, flows_in, v1_flow_starts, v1_flow_ends)
        self.check_nesting(slices)
        for pid, index in used_pids.items():
            if pid not in named_processes:
                self.error(index, f"pid {pid} has events but no process_name metadata")
        for (pid, tid), index in gpu_tracks.items():
            if (pid, tid) not in named_threads:
                self.error(index, f"GPU track pid {pid} tid {tid} has no thread_name")

        return {
            "events": len(events),
            "processes": len(named_processes),
            "gpu_processes": len([p for p in named_processes if p >= LINUX_PID_LIMIT]),
            "tracks": len(used_tracks),
            "slices": sum(len(v) for v in slices.values()),
            "flows": len(flows_out),
        }

    def check_id(self, index, event, key):
        if key not in event:
            self.error(index, f"has no {key}")
            return None
        value = event[key]
        if not isinstance(value, Number) or not value.is_integer():
            self.error(index, f"{key} is not an integer")
            return None
        number = value.value()
        if number < 0 or number > UINT32_MAX:
            self.error(index, f"{key} {number} is outside 0..2^32-1 (the importer turns it into 0)")
            return None
        return number

    def check_time(self, index, event, key):
        if key not in event:
            self.error(index, f"{event.get('ph')} event has no {key}")
            return None
        value = event[key]
        if not isinstance(value, Number) or not TIMESTAMP.match(value.text):
            shown = value.text if isinstance(value, Number) else repr(value)
            self.error(index, f'{key} {shown} is not written as "<us>.<3-digit ns>"')
            return None
        return ts_ns(value)

    def check_metadata(self, index, event, args, pid, tid, named_processes, named_threads):
        name = event.get("name")
        if name not in METADATA_NAMES:
            self.error(index, f"M event {name!r} is not one the importer reads ({sorted(METADATA_NAMES)})")
            return
        if name.endswith("_name"):
            value = args.get("name")
            if not isinstance(value, str) or not value:
                self.error(index, f"{name} without a non-empty args.name")
                return
            if name == "process_name" and pid is not None:
                named_processes.add(pid)
            if name == "thread_name" and pid is not None and tid is not None:
                named_threads.add((pid, tid))
        else:
            value = args.get("sort_index")
            if not isinstance(value, Number) or not value.is_integer():
                self.error(index, f"{name} without an integer args.sort_index")

    def collect_flows(self, index, event, ph, ts, flows_out, flows_in, v1_starts, v1_ends):
        has_bind = "bind_id" in event
        flow_out = event.get("flow_out", False)
        flow_in = event.get("flow_in", False)
        for key in ("flow_out", "flow_in"):
            if key in event and not isinstance(event[key], bool):
                self.error(index, f"{key} is not a boolean")
        if has_bind:
            if ph not in "XB":
                self.error(index, f"bind_id on a {ph} event: only X and B slices bind flows")
                return
            bind = event["bind_id"]
            key = bind.text if isinstance(bind, Number) else bind
            if not isinstance(key, str) or (isinstance(bind, Number) and not bind.is_integer()):
                self.error(index, "bind_id is neither an integer nor a string")
                return
            if flow_out is not True and flow_in is not True:
                self.error(index, "bind_id without flow_out or flow_in")
            if flow_out is True:
                flows_out[key].append((index, ts))
            if flow_in is True:
                flows_in[key].append((index, ts))
        elif flow_out is True or flow_in is True:
            self.error(index, "flow_out/flow_in without bind_id")
        if ph in "sf":
            flow_id = event.get("id")
            identity = (flow_id.text if isinstance(flow_id, Number) else repr(flow_id),
                        repr(event.get("cat")), repr(event.get("name")))
            if "id" not in event:
                self.error(index, f"{ph} flow event without id")
            elif ph == "s":
                v1_starts[identity].append(index)
            else:
                if event.get("bp") != "e":
                    self.error(index, 'f flow event without "bp":"e" binds to the next slice, not its enclosing one')
                v1_ends[identity].append(index)

    def check_flows(self, flows_out, flows_in, v1_starts, v1_ends):
        for key in sorted(set(flows_out) | set(flows_in)):
            outs, ins = flows_out.get(key, []), flows_in.get(key, [])
            first = (outs or ins)[0][0]
            if len(outs) != 1 or len(ins) != 1:
                self.error(first, f"flow {key}: {len(outs)} flow_out and {len(ins)} flow_in; ids must be unique and paired")
                continue
            (out_index, out_ts), (in_index, in_ts) = outs[0], ins[0]
            if out_ts is not None and in_ts is not None and in_ts < out_ts:
                self.error(in_index, f"flow {key} ends (event {in_index}) before it starts (event {out_index})")
        for identity in sorted(set(v1_starts) | set(v1_ends)):
            starts, ends = v1_starts.get(identity, []), v1_ends.get(identity, [])
            if len(starts) != 1 or len(ends) != 1:
                first = (starts or ends)[0]
                self.error(first, f"s/f flow {identity}: {len(starts)} starts and {len(ends)} ends")

    def check_nesting(self, slices):
        for (pid, tid), track in slices.items():
            # Longer first on equal starts: the outer slice comes first.
            track.sort(key=lambda s: (s[0], -(s[1] - s[0])))
            stack = []
            for start, end, index in track:
                while stack and start >= stack[-1][1]:
                    stack.pop()
                if stack and end > stack[-1][1]:
                    parent = stack[-1]
                    self.error(
                        index,
                        f"slice overlaps event {parent[2]} on track pid {pid} tid {tid} without nesting "
                        f"([{start}, {end}] ns vs [{parent[0]}, {parent[1]}] ns)",
                    )
                    continue
                stack.append((start, end, index))


def check_file(path, options):
    try:
        document = load(path)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        print(f"{path}: cannot be parsed as JSON: {error}", file=sys.stderr)
        return 2
    checker = Checker(options.max_errors)
    summary = checker.check(document)
    if not checker.error_count and options.gpu_invariants:
        # On a trace that keeps the importer's rules: the GPU work's own.
        for line in gpu_invariants.problems(json_events(path)["slices"], limit=options.max_errors):
            checker.errors.append(line)
            checker.error_count += 1
    if checker.error_count:
        for line in checker.errors:
            print(f"{path}: {line}", file=sys.stderr)
        if checker.error_count > len(checker.errors):
            print(f"{path}: ... {checker.error_count - len(checker.errors)} more", file=sys.stderr)
        return 1
    if options.summary:
        print(json.dumps(summary, sort_keys=True))
    else:
        print(f"{path}: ok ({summary['events']} events, {summary['flows']} flows)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", metavar="trace")
    parser.add_argument("--max-errors", type=int, default=20)
    parser.add_argument("--summary", action="store_true", help="print counts as JSON (one line per file) on success")
    parser.add_argument("--no-gpu-invariants", dest="gpu_invariants", action="store_false",
                        help="do not check the GPU work's invariants (for traces made of arbitrary records)")
    options = parser.parse_args()
    return max(check_file(path, options) for path in options.traces)


if __name__ == "__main__":
    sys.exit(main())
