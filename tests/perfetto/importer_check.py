"""What Perfetto's own importer (trace_processor_shell, the code behind
ui.perfetto.dev) makes of a trace, against what pftrace_check.py's own
reading of the same file expects (issue 40: "every JSON and .pftrace the
e2e tests write is loaded by trace_processor_shell").

For each file: no stat of severity error or data_loss; the same slices (track,
time, duration, name, category and args), instants, CPU samples, flows
(which slice to which), counter values, process names and thread names.

How the two readings are put side by side:
  - a slice's track is (pid, name): a thread track is named by its thread's
    name (its tid where it has none), a process-scoped track by its own name;
  - times are compared as written: the protobuf's on its trace clock
    (CLOCK_MONOTONIC, as pftrace_check converts them), the JSON's in ns;
  - args are the importer's `debug.*` (protobuf) and `args.*` (JSON) keys,
    arrays flattened as it flattens them (`grid[0]`); a call stack is
    compared by pftrace_check itself (the importer keeps a protobuf's
    interned stack off the args table);
  - a CPU sample is a PerfSample in the protobuf (the perf_sample table) and
    an instant in the JSON (a slice of no duration).
"""
import collections
import csv
import io
import json
import os
import subprocess
import tempfile

# One statement (the shell prints only the last one's rows): a kind and
# seven text columns.
QUERY = r"""
with slice_rows as (
  select s.id, s.ts, s.dur, s.name, s.category, s.arg_set_id,
    coalesce(tp.pid, pp.pid) as pid,
    case when tt.id is not null then coalesce(th.name, cast(th.tid as text)) else t.name end as track
  from slice s join track t on t.id = s.track_id
  left join thread_track tt on tt.id = s.track_id
  left join thread th on th.utid = tt.utid left join process tp on tp.upid = th.upid
  left join process_track pt on pt.id = s.track_id left join process pp on pp.upid = pt.upid
)
select 'slice' as kind, id as a, ts as b, dur as c, name as d, category as e, pid as f, track as g,
  (select group_concat(replace(a.key, char(10), ' ') || char(30) || a.value_type || char(30) ||
                       replace(coalesce(a.display_value, ''), char(10), char(29)), char(31))
   from args a where a.arg_set_id = slice_rows.arg_set_id
     and (a.key glob 'debug.*' or a.key glob 'args.*')) as h
from slice_rows
union all select 'flow', slice_out, slice_in, null, null, null, null, null, null from flow
union all select 'counter', c.ts, cast(c.value as int), null, null, null, coalesce(p.pid, tp.pid), t.name, null
  from counter c join counter_track t on t.id = c.track_id
  left join process_counter_track pct on pct.id = t.id left join process p on p.upid = pct.upid
  left join thread_counter_track tct on tct.id = t.id left join thread th on th.utid = tct.utid
  left join process tp on tp.upid = th.upid
union all select 'sample', ps.ts, th.tid, null, null, null, p.pid, null, null
  from perf_sample ps left join thread th on th.utid = ps.utid left join process p on p.upid = th.upid
union all select 'stat', name || coalesce('[' || idx || ']', ''), value, null, null, null, null, null, null
  from stats where value > 0 and severity in ('error', 'data_loss')
union all select 'process', pid, name, null, null, null, null, null, null
  from process where upid != 0 and name is not null
union all select 'thread', tid, th.name, null, null, null, p.pid, null, null
  from thread th left join process p on p.upid = th.upid where th.utid != 0 and th.name is not null
"""

ARG_PREFIXES = ("debug.", "args.")
IGNORED_ARGS = ("stack",)


def number_text(value):
    """A value as text, numbers rounded as pftrace_check rounds them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(round(value, 3))
    if isinstance(value, str):
        try:
            if "." in value or "e" in value.lower():
                return repr(round(float(value), 3))
            return str(int(value))
        except ValueError:
            return value
    return str(value)


def sanitized(name):
    """A protobuf debug annotation's name as the importer keys it: '.', '['
    and ']' would read as a path, so it writes '_' for them (Kineto's
    "est. achieved occupancy %" reads "est_ achieved occupancy %" there)."""
    return name.replace(".", "_").replace("[", "_").replace("]", "_")


def flat_args(args, rename=lambda name: name):
    """{name: value} as the importer's rows: arrays as name[i], nested
    objects as name.key, every value as text."""
    out = {}

    def add(key, value):
        if isinstance(value, list):
            for i, item in enumerate(value):
                add(f"{key}[{i}]", item)
        elif isinstance(value, dict):
            for k, v in value.items():
                add(f"{key}.{k}", v)
        elif value is not None:
            out[key] = number_text(value)

    for key, value in (args or {}).items():
        if key not in IGNORED_ARGS:
            add(rename(key), value)
    return tuple(sorted(out.items()))


def importer_args(text):
    out = {}
    for row in (text or "").split("\x1f"):
        if not row:
            continue
        key, value_type, value = row.split("\x1e")
        key = key.split(".", 1)[1]
        if key.split("[")[0] in IGNORED_ARGS:
            continue
        out[key] = number_text(value.replace("\x1d", "\n"))
    return tuple(sorted(out.items()))


def load(shell, path):
    """The importer's rows for `path`, or (None, why)."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(QUERY)
        query = f.name
    try:
        run = subprocess.run([shell, "-q", query, path], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "trace_processor_shell did not finish in 600 s"
    finally:
        os.unlink(query)
    if run.returncode != 0:
        return None, f"trace_processor_shell failed on it ({run.returncode}): {run.stderr.strip()[-500:]}"
    rows = list(csv.reader(io.StringIO(run.stdout)))
    if not rows or rows[0][:2] != ["kind", "a"]:
        return None, f"trace_processor_shell printed no table: {run.stdout[:300]!r} {run.stderr[-300:]!r}"
    view = {"slices": {}, "flows": [], "counters": [], "samples": [], "stats": [], "processes": set(),
            "threads": set()}
    for kind, a, b, c, d, e, f, g, h in rows[1:]:
        if kind == "slice":
            view["slices"][int(a)] = ((int(f) if f not in ("", "[NULL]") else None, None if g == "[NULL]" else g),
                                      int(b), int(c), d, None if e == "[NULL]" else e,
                                      importer_args(None if h == "[NULL]" else h))
        elif kind == "flow":
            view["flows"].append((int(a), int(b)))
        elif kind == "counter":
            view["counters"].append(((int(f) if f not in ("", "[NULL]") else None, g), int(a), int(b)))
        elif kind == "sample":
            view["samples"].append((int(f) if f not in ("", "[NULL]") else None, int(b), int(a)))
        elif kind == "stat":
            view["stats"].append(f"{a} = {b}")
        elif kind == "process":
            view["processes"].add((int(a), b))
        elif kind == "thread":
            view["threads"].add((int(f) if f not in ("", "[NULL]") else None, int(a), b))
    return view, None


def signature(track, ts, dur, name, cat, args, rename=lambda name: name):
    return (tuple(track), ts, dur if dur is not None else 0, name, cat, flat_args(args, rename))


def expected_from_protobuf(checker, slices, instants, counters):
    """What the importer should build from the protobuf, from pftrace_check's reading."""
    out = {"slices": [], "flows": set(), "counters": [], "samples": [], "processes": set(), "threads": set()}
    by_id = {}
    for s in slices:
        sig = signature(checker.track_key(s["track"]), s["ts"], s["dur"], s.get("name"), s.get("cat"), s["args"],
                        sanitized)
        out["slices"].append(sig)
        by_id[id(s)] = sig
    for i in instants:
        track = checker.tracks.get(i["track"], {})
        if i.get("perf_sample"):
            out["samples"].append((track.get("pid"), track.get("tid"), i["ts"]))
        else:
            out["slices"].append(signature(checker.track_key(i["track"]), i["ts"], 0, i.get("name"), i.get("cat"),
                                           i["args"], sanitized))
    for flow, start in checker.flow_out.items():
        end = checker.flow_in.get(flow)
        if end is not None:
            out["flows"].add((by_id[id(start)], by_id[id(end)]))
    for c in counters:
        track = checker.tracks.get(c["track"], {})
        out["counters"].append(((track.get("pid"), track.get("name")), c["ts"], c["value"]))
    for track in checker.tracks.values():
        if track.get("process_name"):
            out["processes"].add((track["pid"], track["process_name"]))
        elif track.get("tid") is not None and track["name"]:
            out["threads"].add((track["pid"], track["tid"], track["name"]))
    return out


def expected_from_json(j):
    """What the importer should build from the JSON, from pftrace_check's reading (json_events)."""
    out = {"slices": [], "flows": set(), "counters": [], "samples": [], "processes": set(), "threads": set()}
    by_id = {}
    for s in j["slices"]:
        sig = signature(s["track"], s["ts"], s["dur"], s.get("name"), s.get("cat"), s.get("full_args", s.get("args")))
        out["slices"].append(sig)
        by_id[id(s)] = sig
    for i in j["instants"]:
        args = i.get("full_args", i.get("args"))
        out["slices"].append(signature(i["track"], i["ts"], 0, i.get("name"), i.get("cat"), args))
    for flow, start in j["flows_out"].items():
        end = j["flows_in"].get(flow)
        if end is not None:
            out["flows"].add((by_id[id(start)], by_id[id(end)]))
    for c in j["counters"]:
        out["counters"].append((c["track"], c["ts"], c["value"]))
    out["processes"] = {(pid, name) for pid, name in j["process_names"].items()}
    out["threads"] = {(pid, tid, name) for (pid, tid), name in j["thread_names"].items()}
    return out


def differences(label, what, ours, theirs, limit=3):
    a, b = collections.Counter(ours), collections.Counter(theirs)
    if a == b:
        return []
    only_ours = list((a - b).elements())
    only_theirs = list((b - a).elements())
    return [f"{label} in Perfetto's importer: {what} differ: {len(only_ours)} expected but not imported "
            f"(e.g. {only_ours[:limit]}), {len(only_theirs)} imported but not expected (e.g. {only_theirs[:limit]})"]


def problems(shell, label, path, expected):
    """What is wrong with the importer's view of `path` (a list of lines)."""
    view, error = load(shell, path)
    if error:
        return [f"{label} in Perfetto's importer: {error}"]
    found = []
    if view["stats"]:
        found.append(f"{label} in Perfetto's importer: error or data-loss stats: {view['stats'][:5]}")
    slices = view["slices"]
    found += differences(label, "slices", expected["slices"], slices.values())
    found += differences(label, "flows", expected["flows"],
                         [(slices.get(a), slices.get(b)) for a, b in view["flows"]], limit=2)
    found += differences(label, "counter values", expected["counters"], view["counters"])
    found += differences(label, "CPU samples", expected["samples"], view["samples"])
    found += differences(label, "process names", expected["processes"], view["processes"])
    found += differences(label, "thread names", expected["threads"], view["threads"])
    return found
