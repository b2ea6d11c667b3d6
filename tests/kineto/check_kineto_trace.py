#!/usr/bin/env python3
"""Checks that a JSON trace reads as a PyTorch profiler (Kineto) trace to the
tools built for those: Holistic Trace Analysis (HTA) and the TensorBoard
profiler plugin (torch_tb_profiler).

    check_kineto_trace.py TRACE.json [--require-categories kernel,gpu_memcpy,...]
        [--require-kernel-details] [--require-rank N] [--require-world-size N]
        [--require-backend NAME] [--require-device-properties] [--summary]
        [--require-steps N] [--require-sync-kinds "Stream Sync,Event Sync,..."]

Exit status 0 when the file passes, 1 with one line per problem otherwise
(at most 20 of each kind), 2 when it cannot be read or parsed at all.

What is checked, and which reader needs it (key names as those readers and
Kineto's own JSON writer spell them; tools/README.md, "Kineto compatibility"):
  - the document is an object with a "traceEvents" list; "distributedInfo"
    and "deviceProperties", when present, come before it (HTA's streaming
    metadata reader stops at "traceEvents")
  - distributedInfo: an object whose "rank" is an integer >= 0 (HTA maps its
    trace files to ranks by it and refuses a file without it); "world_size"
    an integer > rank; "backend" a string. HTA does not parse it: it takes
    the first line of the file matching the regular expression
    "rank":\s+(\d+) (Kineto writes `"rank": 3`), so that text must be there,
    and name the same rank
  - deviceProperties: a list whose entry i has "id" i (the TensorBoard plugin
    indexes it by device id), with only Kineto's keys, integers except "name"
  - "baseTimeNanoseconds", when present, an integer >= 0 before
    "traceEvents": Kineto writes Unix time floored to 3 months there and
    every ts as microseconds after it, so that files of several ranks share
    one origin; HTA lines ranks up by ts alone (Trace._align_all_ranks) and
    adds baseTimeNanoseconds for Unix time. With --aligned-with OTHER.json
    (another rank's file, converted on its own): the same base, and each
    collective instance (the "collective" arg of kernels) that both files
    have ends at the same ts within --tolerance-us (default 50000)
  - every event has "ph" and "name" (the TensorBoard plugin reads the name of
    every event); X events have a string "cat" (it lower-cases it), numeric
    "ts" and "dur" >= 0, integer "pid" and "tid" (HTA's required columns)
  - "stream" is an integer wherever it appears (HTA compares it with 0);
    host-side events (cuda_runtime, cuda_driver, user_annotation, cpu_op)
    carry none (HTA takes stream -1, the default, for CPU and > 0 for GPU)
  - GPU work (kernel, gpu_memcpy, gpu_memset): integer "device" >= 0,
    "stream" > 0 and "correlation" > 0; the correlation names exactly one
    cuda_runtime/cuda_driver event (HTA joins them on it) unless the work is
    marked "unattributed"
  - kernels: "grid" and "block" lists of three positive integers; where
    present, integer "registers per thread", "shared memory" and
    "est. achieved occupancy %" (0..100), numeric "blocks per SM" and
    "warps per SM" (with --require-kernel-details: present on every kernel
    a hooked call launched); "device" indexes deviceProperties when that is
    not empty
  - copies and memsets: integer "bytes"; numeric "memory bandwidth (GB/s)",
    which must equal bytes / (dur x 1000): dur is in microseconds
  - steps: X events named "ProfilerStep#N" (HTA finds iterations by the
    number after '#', hta/common/trace.py and types.py's
    ProfilerStepGroupingPattern) are user_annotation, all on one pid/tid,
    N an integer increasing with ts, one step ending before the next begins
    (HTA assigns each event to the step whose span holds its ts). With
    --require-steps N: exactly N of them
  - cuda_sync events (HTA's critical path, hta/analyzers/
    critical_path_analysis.py, reads them by name): named "Stream Sync",
    "Event Sync", "Context Sync" or "Stream Wait Event" as Kineto's
    syncTypeString, "cuda_sync_kind" the same; integer "stream" (-1 where
    CUPTI has none: Context Sync, Event Sync; > 0 otherwise), "device" >= 0,
    "context"; "correlation" names exactly one cuda_runtime/cuda_driver event
    (its host call: CUPTI gives the sync the call's correlation); Event Sync
    and Stream Wait Event add integer "wait_on_stream",
    "wait_on_cuda_event_record_corr_id" and "wait_on_cuda_event_id", where a
    record correlation >= 0 names a host event and a wait_on_stream > 0 a
    stream with GPU work (-1: unknown, HTA's default); the record is an
    event record call (HTA joins it to cudaEventRecord), and every wait on
    one record names the same stream (HTA merges them one to one). With
    --require-event-records: none unknown. With
    --require-sync-kinds: at least one event of each kind named
"""

import argparse
import json
import math
import re
import sys
from collections import Counter, defaultdict

GPU_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
# Events on the GPU's side that are not GPU work of their own.
GPU_SIDE_CATEGORIES = {"gpu_user_annotation", "cuda_sync"}
HOST_CATEGORIES = {"cuda_runtime", "cuda_driver", "user_annotation", "cpu_op"}
DEVICE_PROPERTY_KEYS = {
    "id", "name", "totalGlobalMem", "computeMajor", "computeMinor", "maxThreadsPerBlock",
    "maxThreadsPerMultiprocessor", "regsPerBlock", "regsPerMultiprocessor", "warpSize",
    "sharedMemPerBlock", "sharedMemPerMultiprocessor", "numSms", "sharedMemPerBlockOptin",
}
KERNEL_INTEGER_ARGS = ("registers per thread", "shared memory", "est. achieved occupancy %")
KERNEL_NUMBER_ARGS = ("blocks per SM", "warps per SM")
KERNEL_DETAILS = KERNEL_INTEGER_ARGS + KERNEL_NUMBER_ARGS
MAX_PER_KIND = 20
PROFILER_STEP = re.compile(r"ProfilerStep#(\d+)$")
SYNC_KINDS = {"Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event"}
EVENT_SYNC_KINDS = {"Event Sync", "Stream Wait Event"}
EVENT_RECORD_NAME = re.compile(r"EventRecord")  # cudaEventRecord, cuEventRecord_ptsz, hipEventRecord...
EVENT_SYNC_ARGS = ("wait_on_stream", "wait_on_cuda_event_record_corr_id", "wait_on_cuda_event_id")
# How HTA finds a trace file's rank (hta/common/trace_file.py): the first
# line that matches, anywhere in the file.
HTA_RANK = re.compile(r'"rank":\s+(\d+)')


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value):
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


class Checker:
    def __init__(self, path):
        self.path = path
        self.problems = []
        self.per_kind = Counter()

    def problem(self, kind, text):
        self.per_kind[kind] += 1
        if self.per_kind[kind] <= MAX_PER_KIND:
            self.problems.append(f"{self.path}: {text}")
        elif self.per_kind[kind] == MAX_PER_KIND + 1:
            self.problems.append(f"{self.path}: ... more problems of the kind '{kind}' not shown")

    def check_top_level(self, top, args):
        keys = list(top)
        if not isinstance(top.get("traceEvents"), list):
            self.problem("top", 'the document has no "traceEvents" list')
            return top
        events_at = keys.index("traceEvents")
        for key in ("distributedInfo", "deviceProperties", "baseTimeNanoseconds"):
            if key in top and keys.index(key) > events_at:
                self.problem("top", f'"{key}" comes after "traceEvents": HTA\'s streaming reader never sees it')
        if "baseTimeNanoseconds" in top:
            base = top["baseTimeNanoseconds"]
            if not is_int(base) or base < 0:
                self.problem("clock", f"baseTimeNanoseconds is {base!r}, not an integer >= 0 (Unix ns)")
        info = top.get("distributedInfo")
        if info is not None:
            if not isinstance(info, dict):
                self.problem("distributed", "distributedInfo is not an object")
                info = {}
            rank = info.get("rank")
            if not is_int(rank) or rank < 0:
                self.problem("distributed", f"distributedInfo.rank is {rank!r}: HTA needs an integer >= 0")
            size = info.get("world_size")
            if size is not None and (not is_int(size) or not is_int(rank) or size <= rank):
                self.problem("distributed", f"distributedInfo.world_size {size!r} is not an integer above rank {rank!r}")
            if "backend" in info and not isinstance(info["backend"], str):
                self.problem("distributed", "distributedInfo.backend is not a string")
        else:
            info = {}
        for flag, key in ((args.require_rank, "rank"), (args.require_world_size, "world_size"),
                          (args.require_backend, "backend")):
            if flag is not None and info.get(key) != flag:
                self.problem("distributed", f"distributedInfo.{key} is {info.get(key)!r}, expected {flag!r}")
        devices = top.get("deviceProperties")
        if devices is not None:
            if not isinstance(devices, list):
                self.problem("devices", "deviceProperties is not a list")
            else:
                for i, device in enumerate(devices):
                    if not isinstance(device, dict) or device.get("id") != i:
                        self.problem("devices", f"deviceProperties[{i}] has id {device.get('id') if isinstance(device, dict) else device!r}, "
                                     "not its index (the TensorBoard plugin indexes the list by device id)")
                        continue
                    for key, value in device.items():
                        if key not in DEVICE_PROPERTY_KEYS:
                            self.problem("devices", f"deviceProperties[{i}] has {key!r}, not one of Kineto's keys")
                        elif key == "name" and not isinstance(value, str):
                            self.problem("devices", f"deviceProperties[{i}].name is not a string")
                        elif key != "name" and (not is_int(value) or value < 0):
                            self.problem("devices", f"deviceProperties[{i}].{key} is {value!r}, not an integer >= 0")
        if args.require_device_properties and not (isinstance(devices, list) and any(
                isinstance(d, dict) and "numSms" in d and "computeMajor" in d for d in devices)):
            self.problem("devices", "no deviceProperties entry with numSms and computeMajor")
        return top

    def check_events(self, top, args):
        events = top.get("traceEvents")
        if not isinstance(events, list):
            return Counter()
        devices = top.get("deviceProperties") if isinstance(top.get("deviceProperties"), list) else []
        categories = Counter()
        host_names = {}  # correlation -> name of its cuda_runtime/cuda_driver event
        host_correlations = Counter()
        any_host_correlations = Counter()
        gpu_events = []
        steps = []
        syncs = []
        for index, event in enumerate(events):
            where = f"traceEvents[{index}]"
            if not isinstance(event, dict):
                self.problem("event", f"{where} is not an object")
                continue
            if "ph" not in event or not isinstance(event.get("name"), str):
                self.problem("event", f"{where} has no ph or no string name (the TensorBoard plugin reads every name)")
            eargs = event.get("args", {})
            if not isinstance(eargs, dict):
                self.problem("event", f"{where}: args is not an object")
                eargs = {}
            if "stream" in eargs and not is_int(eargs["stream"]):
                self.problem("stream", f"{where} ({event.get('name')}): stream {eargs['stream']!r} is not an integer")
            if event.get("ph") != "X":
                continue
            cat = event.get("cat")
            if not isinstance(cat, str):
                self.problem("event", f"{where}: X event without a string cat")
                continue
            categories[cat] += 1
            for key in ("ts", "dur"):
                if not is_number(event.get(key)) or event[key] < 0:
                    self.problem("event", f"{where}: {key} is {event.get(key)!r}, not a number >= 0")
            for key in ("pid", "tid"):
                if not is_int(event.get(key)):
                    self.problem("event", f"{where}: {key} is {event.get(key)!r}, not an integer")
            if cat in HOST_CATEGORIES:
                if eargs.get("stream", -1) != -1:
                    self.problem("stream", f"{where} ({cat} {event.get('name')}): a host event with stream "
                                 f"{eargs['stream']!r}; HTA would take it for GPU work")
                if cat in ("cuda_runtime", "cuda_driver") and is_int(eargs.get("correlation")):
                    host_correlations[eargs["correlation"]] += 1
                    host_names[eargs["correlation"]] = event.get("name", "")
            if cat == "gpu.host_function":
                for key in ("stream", "correlation"):
                    if key in eargs:
                        self.problem("host_function", f"{where} (host function {event.get('name')}): carries "
                                     f"{key!r} as GPU work does; HTA would count it as GPU compute")
            if cat not in GPU_CATEGORIES and cat not in GPU_SIDE_CATEGORIES and is_int(eargs.get("correlation")):
                any_host_correlations[eargs["correlation"]] += 1
            if cat in GPU_CATEGORIES:
                gpu_events.append((where, event, eargs))
            if event.get("name", "").startswith("ProfilerStep"):
                steps.append((where, event))
            if cat == "cuda_sync":
                syncs.append((where, event, eargs))
        for correlation, count in sorted(any_host_correlations.items()):
            if count > 1:
                self.problem("correlation", f"correlation {correlation} is on {count} host events, not one "
                             "(HTA joins GPU work to the first)")
        for where, event, eargs in gpu_events:
            self.check_gpu_event(where, event, eargs, host_correlations, devices, args)
        for cat in args.require_categories:
            if categories[cat] == 0:
                self.problem("categories", f"no X event of category {cat!r}")
        self.check_steps(steps, args)
        gpu_streams = {eargs.get("stream") for _, _, eargs in gpu_events}
        self.check_syncs(syncs, host_correlations, host_names, gpu_streams, args)
        return categories

    def check_steps(self, steps, args):
        numbered = []
        for where, event in steps:
            label = f"{where} ({event.get('name')})"
            match = PROFILER_STEP.match(event["name"])
            if not match:
                self.problem("steps", f"{label}: not ProfilerStep#<integer> (HTA reads the number after '#')")
                continue
            if event.get("cat") != "user_annotation":
                self.problem("steps", f"{label}: category {event.get('cat')!r}, not user_annotation")
            if is_number(event.get("ts")) and is_number(event.get("dur")):
                numbered.append((event["ts"], int(match.group(1)), event, label))
        threads = {(e.get("pid"), e.get("tid")) for _, _, e, _ in numbered}
        if len(threads) > 1:
            self.problem("steps", f"ProfilerStep slices on {len(threads)} threads, not one: {sorted(threads)}")
        numbered.sort(key=lambda step: (step[0], step[1]))
        for (ts, n, event, label), (next_ts, next_n, _, next_label) in zip(numbered, numbered[1:]):
            if next_n <= n:
                self.problem("steps", f"{next_label} begins after {label}: steps are not numbered increasingly")
            # Written in µs with three decimals: a ns of rounding.
            if ts + event["dur"] > next_ts + 0.002:
                self.problem("steps", f"{label} ends after {next_label} begins: an event between them would "
                             "belong to both")
        if args.require_steps is not None and len(numbered) != args.require_steps:
            self.problem("steps", f"{len(numbered)} ProfilerStep slices, expected {args.require_steps}")

    def check_syncs(self, syncs, host_correlations, host_names, gpu_streams, args):
        kinds = Counter()
        record_streams = {}  # record correlation -> (wait_on_stream, where first seen)
        for where, event, eargs in syncs:
            name = event.get("name")
            label = f"{where} (cuda_sync {name})"
            if name not in SYNC_KINDS:
                self.problem("sync", f"{label}: not one of Kineto's names {sorted(SYNC_KINDS)}")
                continue
            kinds[name] += 1
            if eargs.get("cuda_sync_kind") != name:
                self.problem("sync", f"{label}: cuda_sync_kind {eargs.get('cuda_sync_kind')!r}, not its name")
            stream = eargs.get("stream")
            if not is_int(stream) or (stream <= 0 and stream != -1):
                self.problem("sync", f"{label}: stream {stream!r} is not -1 or an integer > 0")
            elif name == "Context Sync" and stream != -1:
                self.problem("sync", f"{label}: stream {stream}: a context sync has none (-1)")
            device = eargs.get("device")
            if not is_int(device) or device < 0:
                self.problem("sync", f"{label}: device {device!r} is not an integer >= 0")
            if not is_int(eargs.get("context")):
                self.problem("sync", f"{label}: context {eargs.get('context')!r} is not an integer")
            correlation = eargs.get("correlation")
            if not is_int(correlation) or host_correlations[correlation] != 1:
                self.problem("sync", f"{label}: correlation {correlation!r} names "
                             f"{host_correlations[correlation] if is_int(correlation) else 0} "
                             "cuda_runtime/cuda_driver events, not one (its host call)")
            if name in EVENT_SYNC_KINDS:
                for key in EVENT_SYNC_ARGS:
                    if not is_int(eargs.get(key)):
                        self.problem("sync", f"{label}: {key} {eargs.get(key)!r} is not an integer")
                record = eargs.get("wait_on_cuda_event_record_corr_id")
                if is_int(record) and record >= 0 and host_correlations[record] != 1:
                    self.problem("sync", f"{label}: wait_on_cuda_event_record_corr_id {record} names no host event")
                elif is_int(record) and record >= 0 and not EVENT_RECORD_NAME.search(host_names.get(record, "")):
                    self.problem("sync", f"{label}: wait_on_cuda_event_record_corr_id {record} names "
                                 f"{host_names.get(record)!r}, not an event record (HTA joins it to cudaEventRecord)")
                waited = eargs.get("wait_on_stream")
                if is_int(waited) and waited > 0 and waited not in gpu_streams:
                    self.problem("sync", f"{label}: wait_on_stream {waited} has no GPU work in the trace")
                if is_int(record) and record >= 0 and is_int(waited):
                    first = record_streams.setdefault(record, (waited, label))
                    if first[0] != waited:
                        self.problem("sync", f"{label}: wait_on_stream {waited} for record {record}, "
                                     f"{first[0]} in {first[1]} (HTA wants one stream per record)")
                if args.require_event_records and (not is_int(record) or record < 0 or
                                                   not is_int(waited) or waited <= 0):
                    self.problem("sync", f"{label}: the event's record is unknown (wait_on_stream {waited!r}, "
                                 f"wait_on_cuda_event_record_corr_id {record!r})")
        for kind in args.require_sync_kinds:
            if kinds[kind] == 0:
                self.problem("sync", f"no cuda_sync event {kind!r}")

    def check_gpu_event(self, where, event, eargs, host_correlations, devices, args):
        cat, name = event["cat"], event.get("name")
        label = f"{where} ({cat} {name})"
        device = eargs.get("device")
        if not is_int(device) or device < 0:
            self.problem("gpu", f"{label}: device {device!r} is not an integer >= 0")
        elif devices and device >= len(devices):
            self.problem("gpu", f"{label}: device {device} is not in deviceProperties")
        stream = eargs.get("stream")
        if not is_int(stream) or stream <= 0:
            self.problem("gpu", f"{label}: stream {stream!r} is not an integer > 0 (HTA's mark of GPU work)")
        correlation = eargs.get("correlation")
        if not eargs.get("unattributed"):
            if not is_int(correlation) or correlation <= 0:
                self.problem("gpu", f"{label}: correlation {correlation!r} is not an integer > 0")
            elif host_correlations[correlation] != 1:
                self.problem("correlation", f"{label}: correlation {correlation} names "
                             f"{host_correlations[correlation]} cuda_runtime/cuda_driver events, not one")
        if cat == "kernel":
            self.check_kernel(label, eargs, args)
        else:
            self.check_copy(label, event, eargs)

    def check_kernel(self, label, eargs, args):
        for key in ("grid", "block"):
            shape = eargs.get(key)
            if not (isinstance(shape, list) and len(shape) == 3 and all(is_int(v) and v > 0 for v in shape)):
                self.problem("kernel", f"{label}: {key} is {shape!r}, not [x, y, z] of positive integers")
        for key in KERNEL_INTEGER_ARGS:
            if key in eargs and (not is_int(eargs[key]) or eargs[key] < 0):
                self.problem("kernel", f"{label}: {key!r} is {eargs[key]!r}, not an integer >= 0")
        for key in KERNEL_NUMBER_ARGS:
            if key in eargs and (not is_number(eargs[key]) or eargs[key] < 0):
                self.problem("kernel", f"{label}: {key!r} is {eargs[key]!r}, not a number >= 0")
        occupancy = eargs.get("est. achieved occupancy %")
        if is_int(occupancy) and occupancy > 100:
            self.problem("kernel", f"{label}: est. achieved occupancy % is {occupancy}")
        if args.require_kernel_details and not eargs.get("unattributed"):
            missing = [key for key in KERNEL_DETAILS if key not in eargs]
            if missing:
                self.problem("kernel", f"{label}: no {', '.join(repr(k) for k in missing)}")

    def check_copy(self, label, event, eargs):
        size = eargs.get("bytes")
        if not is_int(size) or size < 0:
            self.problem("copy", f"{label}: bytes {size!r} is not an integer >= 0")
            return
        bandwidth = eargs.get("memory bandwidth (GB/s)")
        if bandwidth is None:
            return
        if not is_number(bandwidth) or bandwidth < 0:
            self.problem("copy", f"{label}: memory bandwidth (GB/s) {bandwidth!r} is not a number >= 0")
            return
        dur = event.get("dur")
        # Bytes per ns is GB/s: with dur in microseconds the two agree (to the
        # written precision). A slice moved to keep its stream nested has
        # another dur than it measured.
        if is_number(dur) and dur > 0 and "start_adjusted_ns" not in eargs:
            expected = size / (dur * 1000.0)
            if abs(expected - bandwidth) > 0.002 + 0.01 * expected:
                self.problem("copy", f"{label}: memory bandwidth (GB/s) {bandwidth} but bytes / (dur x 1000) = "
                             f"{expected:.3f}: is dur in microseconds?")


def load(path):
    # Python's dicts keep the file's key order: check_top_level reads it.
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    return json.loads(text), text


def check_rank_text(checker, document, text):
    info = document.get("distributedInfo")
    if not isinstance(info, dict) or not is_int(info.get("rank")):
        return
    for line in text.splitlines():
        match = HTA_RANK.search(line)
        if match:
            if int(match.group(1)) != info["rank"]:
                checker.problem("distributed", f'HTA reads rank {match.group(1)} (the first "rank": N in the file), '
                                f'distributedInfo says {info["rank"]}')
            return
    checker.problem("distributed", 'no "rank": N in the text (with a space, as Kineto writes it): HTA reads '
                    'every such file as rank 0')


def collective_ends(document):
    """The end (ts + dur, us) of each collective instance's kernel."""
    ends = {}
    for event in document.get("traceEvents", []):
        if not isinstance(event, dict) or event.get("ph") != "X" or event.get("cat") != "kernel":
            continue
        instance = (event.get("args") or {}).get("collective")
        if instance is not None and is_number(event.get("ts")) and is_number(event.get("dur")):
            ends.setdefault(instance, event["ts"] + event["dur"])
    return ends


def check_aligned(checker, document, other_path, tolerance_us):
    try:
        other, _ = load(other_path)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        checker.problem("clock", f"{other_path} cannot be read as JSON: {error}")
        return
    if document.get("baseTimeNanoseconds") != other.get("baseTimeNanoseconds"):
        checker.problem("clock", f"baseTimeNanoseconds {document.get('baseTimeNanoseconds')!r}, "
                        f"{other_path} has {other.get('baseTimeNanoseconds')!r}: the files do not share an origin")
    mine, theirs = collective_ends(document), collective_ends(other)
    common = sorted(set(mine) & set(theirs))
    if not common:
        checker.problem("clock", f"no collective instance in both this file and {other_path}")
    for instance in common:
        if abs(mine[instance] - theirs[instance]) > tolerance_us:
            checker.problem("clock", f"collective {instance} ends at {mine[instance]:.3f} us here, "
                            f"at {theirs[instance]:.3f} in {other_path}: the files are not on one clock")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--require-categories", default="",
                        type=lambda text: [c for c in text.split(",") if c])
    parser.add_argument("--require-kernel-details", action="store_true")
    parser.add_argument("--require-rank", type=int)
    parser.add_argument("--require-world-size", type=int)
    parser.add_argument("--require-backend")
    parser.add_argument("--require-device-properties", action="store_true")
    parser.add_argument("--require-steps", type=int, help="exactly this many ProfilerStep#N slices")
    parser.add_argument("--require-sync-kinds", default="",
                        type=lambda text: [k for k in text.split(",") if k],
                        help="cuda_sync names that must occur, e.g. 'Stream Sync,Event Sync'")
    parser.add_argument("--require-event-records", action="store_true",
                        help="every Event Sync and Stream Wait Event names its event's record and stream")
    parser.add_argument("--aligned-with", help="another rank's file, converted on its own")
    parser.add_argument("--tolerance-us", type=float, default=50000.0)
    parser.add_argument("--summary", action="store_true", help="print the categories of X events as JSON")
    args = parser.parse_args(argv)

    checker = Checker(args.trace)
    try:
        document, text = load(args.trace)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        print(f"{args.trace}: cannot be read as JSON: {error}", file=sys.stderr)
        return 2
    if not isinstance(document, dict):
        print(f"{args.trace}: the document is not a JSON object (Kineto writes an object with traceEvents)",
              file=sys.stderr)
        return 1
    top = checker.check_top_level(document, args)
    check_rank_text(checker, document, text)
    categories = checker.check_events(top, args)
    if args.aligned_with:
        check_aligned(checker, document, args.aligned_with, args.tolerance_us)
    if args.summary:
        print(json.dumps({"categories": dict(sorted(categories.items()))}))
    for line in checker.problems:
        print(line, file=sys.stderr)
    return 1 if checker.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
