"""Invariants of GPU work that every converted trace must hold, whatever its
format: pftrace_check.py applies them to the slices of the protobuf and of
the JSON (issue 40).

  (i)  no GPU operation starts before the call that launched it began: a
       GPU slice (its "correlation", or a host function's "launch
       correlation") starts no earlier than the host slice of the same
       process with that "correlation";
  (ii) one stream runs one operation at a time: the operations of a stream
       (GPU slices with "stream" or "host function stream", per GPU process,
       traced process and device) do not overlap. A graph's nodes are left
       out (a graph's branches run concurrently on its stream); the graph
       launch as a whole is in. This holds across timing sources too: a
       host function (timed by events) beside CUPTI-timed work may not
       overlap it by the clock mappings' error either (proftrace moves
       the host function, whatever order the records arrive in).

A slice here is a dict with "track" ((pid, track name)), "ts" and "dur"
(integer ns), "name", "cat" and "args".
"""
import collections

GPU_CATEGORY_PREFIXES = ("kernel", "gpu")


def is_gpu(s):
    return str(s.get("cat") or "").startswith(GPU_CATEGORY_PREFIXES)


def host_pid(s):
    """The traced process of a GPU slice (its "pid" arg) or of a host slice (its track's pid)."""
    return s["args"].get("pid") if is_gpu(s) else s["track"][0]


def describe(s):
    return f"{s.get('cat')} {s.get('name')!r} at {s['ts']} ns on {s['track']}"


def problems(slices, limit=10):
    out = []
    calls = {}
    for s in slices:
        correlation = s.get("args", {}).get("correlation")
        if correlation is None or is_gpu(s):
            continue
        key = (host_pid(s), correlation)
        if key not in calls or s["ts"] < calls[key]["ts"]:
            calls[key] = s

    early = []
    streams = collections.defaultdict(list)
    for s in slices:
        if not is_gpu(s):
            continue
        args = s.get("args", {})
        correlation = args.get("correlation", args.get("launch correlation"))
        call = calls.get((host_pid(s), correlation)) if correlation is not None else None
        if call is not None and s["ts"] < call["ts"]:
            early.append(f"(i) {describe(s)} starts {call['ts'] - s['ts']} ns before its call "
                         f"{call.get('name')!r} (correlation {correlation}) began")
        stream = args.get("stream", args.get("host function stream"))
        if stream is not None and "graph_node" not in args:
            streams[(s["track"][0], args.get("pid"), str(args.get("device")), stream)].append(s)
    out += early[:limit]
    if len(early) > limit:
        out.append(f"(i) ... and {len(early) - limit} more GPU operations before their calls")

    overlapping = []
    for key, ops in streams.items():
        ops.sort(key=lambda s: (s["ts"], s["ts"] + (s.get("dur") or 0)))
        busy_until, previous = None, None
        for s in ops:
            if busy_until is not None and s["ts"] < busy_until:
                overlapping.append(f"(ii) {describe(s)} starts {busy_until - s['ts']} ns before "
                                   f"{describe(previous)} ends, on the same stream {key[3]}")
            end = s["ts"] + (s.get("dur") or 0)
            if busy_until is None or end > busy_until:
                busy_until, previous = end, s
    out += overlapping[:limit]
    if len(overlapping) > limit:
        out.append(f"(ii) ... and {len(overlapping) - limit} more overlaps on a stream")
    return out
