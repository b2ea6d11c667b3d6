#!/usr/bin/env python3
"""Checks a Perfetto protobuf trace (.pftrace, .pftrace.gz) written by
`proftrace convert` against the importer's rules, and compares it with the
JSON of the same trace.

    pftrace_check.py OUT.pftrace [--json OUT.json] [--sizes] [--expand PLAIN.pftrace]

Decodes the wire format by hand (field numbers: tests/perfetto/perfetto_subset.proto)
and applies the rules the importer applies (docs/outputs.md, "What Perfetto's
importer needs"):

  - a bundle of compressed packets (compressed_packets: deflate in zlib
    format, as Perfetto's service writes it; zstd_compressed_packets: one
    zstd frame) holds nothing else, stays under 512 KiB with its field ids
    and sizes, decompresses to whole packets, and is not nested; its
    packets count as if they stood in its place (the importer parses them
    there);
  - every packet is on a sequence (trusted_packet_sequence_id != 0) and
    carries at most one payload (track_event, track_descriptor, clock_snapshot,
    perf_sample);
  - the sequence's incremental state is cleared (sequence_flags & 1) before
    any packet that needs it, and every packet that uses interned data or
    the sequence's defaults says so (sequence_flags & 2);
  - every iid is interned in the same or an earlier packet: event names,
    categories, debug annotation names and string values, callstacks, their
    frames and the frames' function names;
  - a ClockSnapshot defines every clock a timestamp is on before it is used,
    relating it to the trace clock; an incremental clock (is_incremental) is
    sequence-scoped (64-127), and each packet's timestamp on it is a delta
    from the previous packet's on it, read as a signed 64-bit value in
    unit_multiplier_ns units (as the importer's ClockSynchronizer does);
  - every track is described before its events, a parent before its child,
    a counter track's descriptor is a counter;
  - slices nest on each track once sorted by (timestamp, file order): every
    end closes an open slice, none stays open at the end;
  - each flow id starts once (flow_ids, or flow_ids_old as varints) and ends
    once (terminating_flow_ids, or terminating_flow_ids_old), and the arrow
    does not point back in time; an event carries an id in at most one of
    each pair (the importer ignores the _old field when both are present).

The GPU work in it holds the invariants of gpu_invariants.py (no operation
before its launching call, none overlapping another on its stream), and so
does the JSON's with --json.

With --json, the events the importer would build from the protobuf (slices
with their times, names, categories, args and call stacks; instants; async
ranges; counter values; flows; process and track names and order) must be
the same as the JSON's, event for event.

Exit status 0 when every check passes; 1 with the problems listed.
"""
import argparse
import collections
import gzip
import json
import os
import struct
import sys
import zlib

import gpu_invariants
import importer_check

# ---- wire format ------------------------------------------------------------


def read_varint(data, pos):
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def fields(data):
    """(field, wire type, value) of a message: ints for varint/fixed64, bytes
    for length-delimited."""
    pos = 0
    end = len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(data, pos)
        elif wire == 1:
            value = struct.unpack_from("<Q", data, pos)[0]
            pos += 8
        elif wire == 2:
            length, pos = read_varint(data, pos)
            value = bytes(data[pos:pos + length])
            pos += length
            if pos > end:
                raise ValueError("a length-delimited field runs past its message")
        elif wire == 5:
            value = struct.unpack_from("<I", data, pos)[0]
            pos += 4
        else:
            raise ValueError(f"wire type {wire} of field {field}")
        yield field, wire, value


def to_int64(value):
    return value - (1 << 64) if value >= 1 << 63 else value


def varint_bytes(value):
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# TracePacket fields that hold packets compressed with deflate (zlib format,
# as Perfetto's service writes them) or zstd.
COMPRESSED_PACKETS = 50
ZSTD_COMPRESSED_PACKETS = 133
BUNDLE_FIELDS = (COMPRESSED_PACKETS, ZSTD_COMPRESSED_PACKETS)


def zstd_decompress(payload):
    """One zstd frame, through the system's libzstd (no Python module needed)."""
    import ctypes
    import ctypes.util
    lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    lib.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
    lib.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    size = lib.ZSTD_getFrameContentSize(payload, len(payload))
    if size >= (1 << 64) - 2:
        raise ValueError("no content size in the zstd frame")
    out = ctypes.create_string_buffer(max(size, 1))
    got = lib.ZSTD_decompress(out, size, payload, len(payload))
    if lib.ZSTD_isError(got) or got != size:
        raise ValueError("zstd frame does not decompress")
    return out.raw[:size]


def expanded(checker, data):
    """The trace with every bundle replaced by its packets: what protoc can decode."""
    out = bytearray()
    for packet in checker.packets(data):
        out += b"\x0a" + varint_bytes(len(packet)) + packet
    return bytes(out)


def as_dict(data, repeated=()):
    """Field number -> value (last wins), or list for `repeated` fields."""
    out = {}
    for field, _, value in fields(data):
        if field in repeated:
            out.setdefault(field, []).append(value)
        else:
            out[field] = value
    return out


# ---- decoding a trace -------------------------------------------------------

SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
BUILTIN_CLOCKS = {1, 2, 3, 4, 5, 6}
MONOTONIC = 3


class Checker:
    def __init__(self):
        self.problems = []
        self.interned = collections.defaultdict(dict)  # table -> iid -> value
        self.cleared = False
        self.defaults_clock = None
        self.clocks = {}  # clock id -> (its timestamp, monotonic timestamp)
        self.incremental = {}  # incremental clock id -> [unit_multiplier_ns, its last timestamp]
        self.tracks = {}  # uuid -> descriptor dict
        self.track_events = []  # (ts, order, uuid, type, event dict)
        self.flow_out = {}
        self.flow_in = {}
        self.sizes = collections.Counter()
        self.bundles = 0

    def problem(self, text):
        if len(self.problems) < 50:
            self.problems.append(text)

    def resolve(self, table, iid, packet_index, what):
        value = self.interned[table].get(iid)
        if value is None:
            self.problem(f"packet {packet_index}: {what} iid {iid} used before it was interned")
        return value

    def read_interned(self, data, index, needs):
        if not self.cleared:
            self.problem(f"packet {index}: interned data before the sequence's state was cleared")
        if not needs:
            self.problem(f"packet {index}: interned data without SEQ_NEEDS_INCREMENTAL_STATE")
        names = {1: "category", 2: "name", 3: "annotation_name", 5: "function_name", 29: "annotation_value"}
        for field, _, value in fields(data):
            if field in names:
                entry = as_dict(value)
                iid = entry.get(1, 0)
                if iid == 0:
                    self.problem(f"packet {index}: an interned {names[field]} without an iid")
                self.interned[names[field]][iid] = entry.get(2, b"").decode("utf-8", "replace")
            elif field == 6:  # frames
                frame = as_dict(value)
                if 2 in frame:
                    self.resolve("function_name", frame[2], index, "a frame's function name")
                self.interned["frame"][frame.get(1, 0)] = self.interned["function_name"].get(frame.get(2))
            elif field == 7:  # callstacks
                stack = as_dict(value, repeated=(2,))
                frames = [self.resolve("frame", f, index, "a callstack's frame") for f in stack.get(2, [])]
                self.interned["callstack"][stack.get(1, 0)] = frames

    def timestamp(self, packet, index):
        if 8 not in packet:
            return None
        clock = packet.get(58, self.defaults_clock)
        if clock is None:
            clock = 6  # BOOTTIME
        if clock not in self.clocks:
            self.problem(f"packet {index}: timestamp on clock {clock}, which no ClockSnapshot defined before")
            return packet[8]
        theirs, monotonic = self.clocks[clock]
        value = packet[8]
        if clock in self.incremental:
            # A delta from the previous packet on this clock, signed.
            state = self.incremental[clock]
            state[1] = to_int64((state[1] + to_int64(value) * state[0]) % (1 << 64))
            value = state[1]
        # The importer's arithmetic: 64-bit, signed.
        return to_int64((value - theirs + monotonic) % (1 << 64))

    def read_snapshot(self, data, index):
        snapshot = as_dict(data, repeated=(1,))
        values = {}
        incremental = {}
        for clock in snapshot.get(1, []):
            entry = as_dict(clock)
            unit = entry.get(4, 0) or 1
            values[entry.get(1, 0)] = entry.get(2, 0) * unit
            if entry.get(3):
                incremental[entry.get(1, 0)] = unit
            elif unit != 1:
                self.problem(f"packet {index}: clock {entry.get(1, 0)} counts in units of {unit} ns (not checked here)")
        if MONOTONIC not in values:
            self.problem(f"packet {index}: a ClockSnapshot without CLOCK_MONOTONIC")
            return
        if snapshot.get(2, MONOTONIC) != MONOTONIC:
            self.problem(f"packet {index}: the trace clock is not CLOCK_MONOTONIC")
        for clock, value in values.items():
            if clock not in BUILTIN_CLOCKS and not 64 <= clock < 128:
                self.problem(f"packet {index}: clock id {clock} is neither builtin nor sequence-scoped")
            self.clocks[clock] = (value, values[MONOTONIC])
            if clock in incremental:
                if not 64 <= clock < 128:
                    self.problem(f"packet {index}: clock {clock} is incremental but not sequence-scoped")
                # The snapshot sets the clock; the next packet's delta is from it.
                self.incremental[clock] = [incremental[clock], value]
            else:
                self.incremental.pop(clock, None)

    def read_descriptor(self, data, index):
        d = as_dict(data)
        uuid = d.get(1, 0)
        if uuid == 0:
            self.problem(f"packet {index}: a track descriptor without a uuid")
        parent = d.get(5)
        if parent is not None and parent not in self.tracks:
            self.problem(f"packet {index}: track {uuid}'s parent {parent} is not described before it")
        track = {"uuid": uuid, "parent": parent, "name": d.get(2, b"").decode("utf-8", "replace"),
                 "rank": to_int64(d[12]) if 12 in d else None, "counter": 8 in d}
        if 3 in d:
            process = as_dict(d[3])
            track["pid"] = process.get(1, 0)
            track["process_name"] = process.get(6, b"").decode("utf-8", "replace")
        if 4 in d:
            thread = as_dict(d[4])
            track["pid"] = thread.get(1, 0)
            track["tid"] = thread.get(2, 0)
            track["name"] = thread.get(5, b"").decode("utf-8", "replace")
        if "pid" not in track and parent in self.tracks:
            track["pid"] = self.tracks[parent].get("pid")
        if uuid in self.tracks:
            self.problem(f"packet {index}: track {uuid} described twice")
        self.tracks[uuid] = track

    def annotation_value(self, a, index):
        if 2 in a:
            return bool(a[2])
        if 3 in a:
            return a[3]
        if 4 in a:
            return to_int64(a[4])
        if 5 in a:
            return round(struct.unpack("<d", struct.pack("<Q", a[5]))[0], 3)
        if 6 in a:
            return a[6].decode("utf-8", "replace")
        if 17 in a:
            return self.resolve("annotation_value", a[17], index, "a debug annotation string value")
        if 12 in a:
            return [self.annotation_value(as_dict(item), index) for item in a[12]]
        return None

    def read_event(self, data, packet, index, needs, ts, order):
        e = as_dict(data, repeated=(3, 4, 22, 36, 42, 47, 48))
        kind = e.get(9, 0)
        uuid = e.get(11, 0)
        if uuid not in self.tracks:
            self.problem(f"packet {index}: an event on track {uuid}, not described before it")
        if ts is None:
            self.problem(f"packet {index}: an event without a timestamp")
            ts = 0
        uses_state = bool(e.get(10) or e.get(3) or e.get(56) or any(
            1 in as_dict(a) or 17 in as_dict(a) for a in e.get(4, [])))
        if (uses_state or self.defaults_clock is not None and 58 not in packet) and not self.cleared:
            self.problem(f"packet {index}: uses incremental state before it was cleared")
        if uses_state and not needs:
            self.problem(f"packet {index}: uses interned data without SEQ_NEEDS_INCREMENTAL_STATE")
        event = {"type": kind, "track": uuid, "ts": ts}
        if 10 in e:
            event["name"] = self.resolve("name", e[10], index, "an event name")
        elif 23 in e:
            event["name"] = e[23].decode("utf-8", "replace")
        cats = [self.resolve("category", c, index, "a category") for c in e.get(3, [])]
        cats += [c.decode() for c in e.get(22, [])]
        if cats:
            event["cat"] = ",".join(str(c) for c in cats)
        args = {}
        for raw in e.get(4, []):
            a = as_dict(raw, repeated=(12,))
            key = self.resolve("annotation_name", a[1], index, "a debug annotation name") if 1 in a else \
                a.get(10, b"").decode()
            args[key] = self.annotation_value(a, index)
        if 56 in e:
            frames = self.resolve("callstack", e[56], index, "a callstack")
            if frames is not None:
                args["stack"] = "\n".join(str(f) for f in frames)
        event["args"] = args
        if kind == COUNTER:
            track = self.tracks.get(uuid)
            if track is not None and not track["counter"]:
                self.problem(f"packet {index}: a counter value on track {uuid}, which is not a counter")
            event["value"] = to_int64(e.get(30, 0))
        for fixed, varint, what in ((47, 36, "flow_ids"), (48, 42, "terminating_flow_ids")):
            if fixed in e and varint in e:
                self.problem(f"packet {index}: {what} and {what}_old on one event (the importer reads only {what})")
        event["flow_out"] = e.get(47, e.get(36, []))
        event["flow_in"] = e.get(48, e.get(42, []))
        if kind not in (SLICE_BEGIN, SLICE_END, INSTANT, COUNTER):
            self.problem(f"packet {index}: track event type {kind}")
        self.track_events.append((ts, order, uuid, kind, event))

    def read_perf_sample(self, data, index, needs, ts, order):
        """A callstack sample (PerfSample, TracePacket field 66: pid 2, tid 3,
        callstack_iid 4): on its thread's track, as the JSON's "CPU sample"
        instant (issue 38), its stack resolved as an event's is."""
        sample = as_dict(data)
        if not self.cleared:
            self.problem(f"packet {index}: a sample before the sequence's state was cleared")
        if not needs:
            self.problem(f"packet {index}: a sample uses interned data without SEQ_NEEDS_INCREMENTAL_STATE")
        if ts is None:
            self.problem(f"packet {index}: a sample without a timestamp")
            ts = 0
        frames = self.resolve("callstack", sample.get(4, 0), index, "a sample's callstack")
        pid, tid = sample.get(2), sample.get(3)
        uuid = next((u for u, t in self.tracks.items() if t.get("pid") == pid and t.get("tid") == tid), None)
        if uuid is None:
            self.problem(f"packet {index}: a sample of pid {pid} tid {tid}, whose thread is not described before it")
            return
        event = {"type": INSTANT, "track": uuid, "ts": ts, "name": "CPU sample", "cat": "cpu_sample",
                 "args": {"stack": "\n".join(str(f) for f in frames or [])}, "flow_out": [], "flow_in": [],
                 "perf_sample": True}
        self.track_events.append((ts, order, uuid, INSTANT, event))

    def packets(self, data, bundled=False):
        """The trace's packets in the order the importer parses them: a
        bundle (compressed_packets, zstd_compressed_packets) is replaced by
        the packets it holds."""
        for field, wire, packet_bytes in fields(data):
            if field != 1 or wire != 2:
                self.problem(f"the {'bundle' if bundled else 'trace'} holds field {field} (wire type {wire}), not packets")
                continue
            bundle = [(f, v) for f, w, v in fields(packet_bytes) if f in BUNDLE_FIELDS and w == 2]
            if not bundle:
                yield packet_bytes
                continue
            self.bundles += 1
            others = [f for f, _, _ in fields(packet_bytes) if f not in BUNDLE_FIELDS]
            if others or len(bundle) > 1:
                self.problem(f"bundle {self.bundles}: fields {others} beside the compressed packets (the importer reads only those)")
            if bundled:
                self.problem(f"bundle {self.bundles}: a bundle inside a bundle")
            size = 1 + len(varint_bytes(len(packet_bytes))) + len(packet_bytes)
            if size >= 512 * 1024:
                self.problem(f"bundle {self.bundles}: {size} bytes, Perfetto's limit is 512 KiB")
            codec, payload = bundle[0]
            try:
                inner = zlib.decompress(payload) if codec == COMPRESSED_PACKETS else zstd_decompress(payload)
            except (zlib.error, ValueError) as e:
                self.problem(f"bundle {self.bundles}: does not decompress: {e}")
                continue
            self.sizes["compressed bundles"] += size
            yield from self.packets(inner, bundled=True)

    def read(self, data):
        order = 0
        for index, packet_bytes in enumerate(self.packets(data)):
            self.sizes["packet framing"] += 2
            packet = as_dict(packet_bytes)
            if packet.get(10, 0) == 0:
                self.problem(f"packet {index}: no trusted_packet_sequence_id")
            flags = packet.get(13, 0)
            if flags & 1:
                self.cleared = True
                self.interned.clear()
                self.defaults_clock = None
            payloads = [f for f in (6, 11, 60, 66) if f in packet]
            if len(payloads) > 1:
                self.problem(f"packet {index}: {len(payloads)} payloads in one packet")
            if 59 in packet:
                defaults = as_dict(packet[59])
                if not flags & 1:
                    self.problem(f"packet {index}: packet defaults on a packet that does not clear the state")
                self.defaults_clock = defaults.get(58)
            if 12 in packet:
                self.read_interned(packet[12], index, flags & 2)
                self.sizes["interned data"] += len(packet[12])
            if 6 in packet:
                self.read_snapshot(packet[6], index)
            if 60 in packet:
                self.read_descriptor(packet[60], index)
                self.sizes["track descriptors"] += len(packet[60])
            if 11 in packet:
                self.sizes["track events"] += len(packet[11])
                self.sizes["timestamps and sequence"] += len(packet_bytes) - len(packet[11]) - 2
                self.read_event(packet[11], packet, index, flags & 2, self.timestamp(packet, index), order)
                order += 1
            if 66 in packet:
                self.read_perf_sample(packet[66], index, flags & 2, self.timestamp(packet, index), order)
                order += 1

    # ---- what the importer builds ----

    def build(self):
        """Slices, instants, counters and flows, as the importer would see them."""
        slices, instants, counters = [], [], []
        open_slices = collections.defaultdict(list)
        for ts, _, uuid, kind, event in sorted(self.track_events, key=lambda e: (e[0], e[1])):
            if kind == SLICE_BEGIN:
                open_slices[uuid].append(event)
            elif kind == SLICE_END:
                if not open_slices[uuid]:
                    self.problem(f"an end at {ts} on track {uuid} with no open slice")
                    continue
                begin = open_slices[uuid].pop()
                begin["dur"] = ts - begin["ts"]
                slices.append(begin)
            elif kind == INSTANT:
                instants.append(event)
            elif kind == COUNTER:
                counters.append(event)
        for uuid, stack in open_slices.items():
            if stack:
                self.problem(f"{len(stack)} slices on track {uuid} never end")
        for s in slices:
            for flow in s["flow_out"]:
                if flow in self.flow_out:
                    self.problem(f"flow {flow} starts twice")
                self.flow_out[flow] = s
            for flow in s["flow_in"]:
                if flow in self.flow_in:
                    self.problem(f"flow {flow} ends twice")
                self.flow_in[flow] = s
        for flow in set(self.flow_out) | set(self.flow_in):
            if flow not in self.flow_out or flow not in self.flow_in:
                self.problem(f"flow {flow} has only one end")
            elif self.relative(self.flow_in[flow]["ts"]) < self.relative(self.flow_out[flow]["ts"]):
                self.problem(f"flow {flow} points back in time")
        return slices, instants, counters

    def relative(self, ts):
        """ns since the timeline's start (its clock's zero), as a signed 64-bit value."""
        base = self.clocks.get(64, (0, 0))[1]
        return to_int64((ts - base) % (1 << 64))

    def track_key(self, uuid):
        """(pid, track name) as the JSON names it."""
        track = self.tracks.get(uuid, {})
        if "process_name" in track:
            return (track.get("pid"), None)
        if "tid" in track and not track["name"]:
            return (track.get("pid"), str(track["tid"]))
        return (track.get("pid"), track["name"])


# ---- the same events from the JSON ------------------------------------------


def us_to_ns(text):
    whole, _, fraction = str(text).partition(".")
    negative = whole.startswith("-")
    value = abs(int(whole)) * 1000 + int((fraction + "000")[:3])
    return -value if negative else value


def json_events(path):
    with open(path, "rb") as f:
        document = json.loads(f.read(), parse_float=lambda text: text, parse_int=lambda text: text)
    events = document["traceEvents"] if isinstance(document, dict) else document
    process_names, thread_names, process_sort, thread_sort = {}, {}, {}, {}
    for e in events:
        if e.get("ph") == "M":
            pid, tid = int(e["pid"]), int(e["tid"])
            if e["name"] == "process_name":
                process_names[pid] = e["args"]["name"]
            elif e["name"] == "thread_name":
                thread_names[(pid, tid)] = e["args"]["name"]
            elif e["name"] == "process_sort_index":
                process_sort[pid] = int(e["args"]["sort_index"])
            elif e["name"] == "thread_sort_index":
                thread_sort[(pid, tid)] = int(e["args"]["sort_index"])

    def key(pid, tid):
        pid, tid = int(pid), int(tid)
        return (pid, thread_names.get((pid, tid), str(tid)))

    def norm_args(args):
        out = {}
        for k, v in (args or {}).items():
            out[k] = normalize(v)
        return out

    slices, instants, counters, flows_out, flows_in, asyncs = [], [], [], {}, {}, {}
    for e in events:
        ph = e.get("ph")
        if ph == "X":
            s = {"track": key(e["pid"], e["tid"]), "ts": us_to_ns(e["ts"]), "dur": us_to_ns(e["dur"]),
                 "name": e["name"], "cat": e.get("cat"), "args": norm_args(e.get("args"))}
            slices.append(s)
            if "bind_id" in e:
                (flows_out if e.get("flow_out") else flows_in)[int(e["bind_id"])] = s
        elif ph == "i":
            track = (int(e["pid"]), None) if e.get("s") == "p" else key(e["pid"], e["tid"])
            full_args = args = norm_args(e.get("args"))
            if e.get("cat") == "cpu_sample":  # the protobuf's PerfSample carries only the stack
                args = {"stack": args.get("stack", "")}
            instants.append({"track": track, "ts": us_to_ns(e["ts"]), "name": e["name"], "cat": e.get("cat"),
                             "args": args, "full_args": full_args})
        elif ph == "C":
            for k, v in e["args"].items():
                counters.append({"track": (int(e["pid"]), f"{e['name']} {k}"), "ts": us_to_ns(e["ts"]),
                                 "value": int(v)})
        elif ph in ("b", "e"):
            ident = (int(e["pid"]), e["id2"]["local"], e["name"])
            a = asyncs.setdefault(ident, {"name": e["name"], "cat": e.get("cat")})
            if ph == "b":
                a["ts"] = us_to_ns(e["ts"])
                a["args"] = norm_args(e.get("args"))
                a["full_args"] = dict(a["args"])  # as written (what Perfetto's importer reads)
                a["args"]["id"] = e["id2"]["local"]
                a["args"]["tid"] = int(e["tid"])
                a["track"] = (int(e["pid"]), e["name"])
            else:
                a["end"] = us_to_ns(e["ts"])
    for a in asyncs.values():
        a["dur"] = a.pop("end", a.get("ts", 0)) - a.get("ts", 0)
        slices.append(a)
    return {"slices": slices, "instants": instants, "counters": counters, "flows_out": flows_out,
            "flows_in": flows_in, "process_names": process_names, "thread_names": thread_names,
            "process_sort": process_sort, "thread_sort": thread_sort,
            # Kineto's clock: ts counts from baseTimeNanoseconds (Unix time);
            # minus the reference host's REALTIME - MONOTONIC, monotonic ns.
            "json_origin_monotonic": (int(document["baseTimeNanoseconds"]) -
                                      int(document["realtimeMinusMonotonicNanoseconds"])
                                      if isinstance(document, dict) and "baseTimeNanoseconds" in document else None)}


def normalize(value):
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        try:
            if "." in value or "e" in value.lower():
                return round(float(value), 3)
            return int(value)
        except ValueError:
            return value
    return value


def signature(event):
    track = event["track"]
    # The GPU side of an NVTX range: on the stream of its work in the JSON
    # (Kineto's convention), on the device's "NVTX GPU ranges" track in the
    # protobuf (whose importer would nest an annotation written after its
    # kernels inside the first of them): the same slice, in the same GPU
    # process.
    if event.get("cat") == "gpu_user_annotation":
        track = (track[0], "")
    return (track, event["ts"], event.get("dur"), event.get("name"), event.get("cat"),
            json.dumps(event.get("args", {}), sort_keys=True))


def pb_slice(checker, s):
    return {"track": checker.track_key(s["track"]), "ts": s["ts"], "dur": s["dur"], "name": s.get("name"),
            "cat": s.get("cat"), "args": {k: normalize(v) for k, v in s["args"].items()}}


def cpu_sample_args(instant):
    """A CPU sample whose stack the protobuf could not intern is written as a
    plain instant with its args; compared, as a PerfSample is, by its stack
    alone (json_events does the same to the JSON's)."""
    if instant.get("cat") == "cpu_sample":
        instant["args"] = {"stack": instant["args"].get("stack", "")}
    return instant


def compare(checker, slices, instants, counters, j):
    problems = []

    def pb_slice(s):
        return globals()["pb_slice"](checker, s)

    base = min(checker.clocks.values(), key=lambda c: c[1])[1] if checker.clocks else 0
    base = checker.clocks.get(64, (0, base))[1]
    if j["json_origin_monotonic"] is not None:
        base = j["json_origin_monotonic"]
    def shift(ts):
        return to_int64((ts - base) % (1 << 64))

    pb = [pb_slice(s) for s in slices]
    for s in pb:
        s["ts"] = shift(s["ts"])
    for name, ours, theirs in (("slices", pb, j["slices"]),
                               ("instants", [cpu_sample_args(dict(pb_slice(dict(i, dur=None)), ts=shift(i["ts"])))
                                             for i in instants],
                                [dict(i, dur=None) for i in j["instants"]]),
                               ("counter values", [{"track": checker.track_key(c["track"]), "ts": shift(c["ts"]),
                                                    "value": c["value"]} for c in counters], j["counters"])):
        a = collections.Counter(signature(e) if name != "counter values" else (e["track"], e["ts"], e["value"])
                                for e in ours)
        b = collections.Counter(signature(e) if name != "counter values" else (e["track"], e["ts"], e["value"])
                                for e in theirs)
        if a != b:
            only_pb = list((a - b).elements())[:3]
            only_json = list((b - a).elements())[:3]
            problems.append(f"{name} differ: {sum((a - b).values())} only in the protobuf (e.g. {only_pb}), "
                            f"{sum((b - a).values())} only in the JSON (e.g. {only_json})")
    # Flows: the same pairs of slices.
    pb_flows = {(signature(pb_slice(checker.flow_out[f])),
                 signature(pb_slice(checker.flow_in[f]))) for f in checker.flow_out if f in checker.flow_in}
    pb_flows = {(tuple(x if i != 1 else shift(x) for i, x in enumerate(a)),
                 tuple(x if i != 1 else shift(x) for i, x in enumerate(b))) for a, b in pb_flows}
    json_flows = {(signature(j["flows_out"][f]), signature(j["flows_in"][f])) for f in j["flows_out"]
                  if f in j["flows_in"]}
    if pb_flows != json_flows:
        problems.append(f"flows differ: {len(pb_flows - json_flows)} only in the protobuf, "
                        f"{len(json_flows - pb_flows)} only in the JSON")
    # Names and order of processes and tracks.
    for uuid, track in checker.tracks.items():
        if "process_name" in track:
            pid = track["pid"]
            if j["process_names"].get(pid) != track["process_name"]:
                problems.append(f"process {pid}: named {track['process_name']!r}, "
                                f"{j['process_names'].get(pid)!r} in the JSON")
            if track["rank"] != j["process_sort"].get(pid):
                problems.append(f"process {pid}: order {track['rank']}, {j['process_sort'].get(pid)} in the JSON")
    def projection_track(name):  # see signature()
        return name.startswith("NVTX GPU ranges: ")
    json_tracks = collections.Counter((pid, name) for (pid, _), name in j["thread_names"].items()
                                      if not projection_track(name))
    named = [t for t in checker.tracks.values()
             if "process_name" not in t and not t["counter"] and t["rank"] is not None
             and t["name"] and not projection_track(t["name"])]
    # A track of the emitter's own (no tid) may have a twin of the same name
    # and place, for a late slice that would misnest on it (protobuf_emitter.h):
    # one named track, as in the JSON.
    twins = {(t.get("pid"), t["name"], t["rank"]) for t in named if t.get("tid") is None}
    pb_tracks = collections.Counter((t.get("pid"), t["name"]) for t in named if t.get("tid") is not None)
    pb_tracks.update((pid, name) for pid, name, _ in twins)
    if json_tracks != pb_tracks:
        problems.append(f"named tracks differ: {list((pb_tracks - json_tracks).elements())[:3]} only in the "
                        f"protobuf, {list((json_tracks - pb_tracks).elements())[:3]} only in the JSON")
    return problems, len(pb)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pftrace")
    parser.add_argument("--json", help="the JSON of the same trace: the events must be the same")
    parser.add_argument("--sizes", action="store_true", help="bytes by part of the file")
    parser.add_argument("--trace-processor", metavar="SHELL", default=os.environ.get("TRACE_PROCESSOR"),
                        help="also load the file(s) in Perfetto's trace_processor_shell (default: $TRACE_PROCESSOR)")
    parser.add_argument("--expand", metavar="OUT",
                        help="write the trace with its compressed bundles expanded in place (for protoc --decode)")
    args = parser.parse_args()
    with open(args.pftrace, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    checker = Checker()
    if args.expand:
        with open(args.expand, "wb") as f:
            f.write(expanded(Checker(), data))
    try:
        checker.read(memoryview(data))
    except (ValueError, IndexError, struct.error) as e:
        checker.problem(f"the file does not decode: {e}")
    slices, instants, counters = checker.build()
    problems = list(checker.problems)
    problems += ["protobuf: " + p for p in gpu_invariants.problems([pb_slice(checker, s) for s in slices])]
    if args.json:
        j = json_events(args.json)
        problems += ["JSON: " + p for p in gpu_invariants.problems(j["slices"])]
        more, _ = compare(checker, slices, instants, counters, j)
        problems += more
    else:
        j = None
    if args.trace_processor and not problems:
        problems += importer_check.problems(args.trace_processor, "protobuf", args.pftrace,
                                            importer_check.expected_from_protobuf(checker, slices, instants, counters))
        if args.json:
            problems += importer_check.problems(args.trace_processor, "JSON", args.json,
                                                importer_check.expected_from_json(j))
    if args.sizes:
        total = len(data)
        events = len(slices) + len(instants) + len(counters)
        print(f"{total} bytes, {events} events: {total / max(events, 1):.1f} bytes per event")
        for part, size in checker.sizes.most_common():
            print(f"  {part}: {size} ({size / max(events, 1):.1f} per event)")
    if problems:
        for p in problems:
            print(f"pftrace_check: {args.pftrace}: {p}", file=sys.stderr)
        return 1
    print(f"pftrace_check: {args.pftrace}: ok: {len(slices)} slices, {len(instants)} instants, "
          f"{len(counters)} counter values, {len(checker.flow_out)} flows, {len(checker.tracks)} tracks, "
          f"{checker.bundles} compressed bundles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
