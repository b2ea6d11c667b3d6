#!/usr/bin/env python3
"""Tests for perfetto_json_check.py: a well-formed trace passes, and each rule
rejects a document that breaks it (so the checker cannot silently pass
everything)."""

import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perfetto_json_check.py")
GPU_PID = 1_000_000_000


def meta(kind, pid, tid, **args):
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": args}


def valid_trace():
    """A host process with an API slice that flows to a kernel on a GPU track."""
    return [
        meta("process_name", 1234, 1234, name="python train.py"),
        meta("process_sort_index", 1234, 1234, sort_index=0),
        meta("thread_name", 1234, 1235, name="worker"),
        meta("process_name", GPU_PID, GPU_PID, name="GPU 0"),
        meta("thread_name", GPU_PID, 1, name="Stream 13 (pid 1234)"),
        meta("thread_sort_index", GPU_PID, 1, sort_index=0),
        {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1234, "tid": 1235,
         "ts": "RAW:10.000", "dur": "RAW:5.500", "bind_id": 1, "flow_out": True, "args": {"correlation": 1}},
        {"ph": "X", "cat": "cuda_driver", "name": "nested", "pid": 1234, "tid": 1235,
         "ts": "RAW:11.000", "dur": "RAW:1.000", "args": {}},
        {"ph": "X", "cat": "kernel", "name": "kernel", "pid": GPU_PID, "tid": 1,
         "ts": "RAW:20.000", "dur": "RAW:3.000", "bind_id": 1, "flow_in": True, "args": {}},
        {"ph": "i", "s": "p", "name": "LOST 3 records", "pid": 1234, "tid": 1235, "ts": "RAW:30.000"},
    ]


def render(events, container=True):
    """JSON text; "RAW:<text>" strings become bare numbers with that text."""
    text = json.dumps({"traceEvents": events} if container else events)
    return re.sub(r'"RAW:([^"]*)"', r"\1", text)


class CheckerTest(unittest.TestCase):
    def run_checker(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(text)
            path = f.name
        try:
            result = subprocess.run([sys.executable, CHECKER, path, "--summary"],
                                    capture_output=True, text=True)
        finally:
            os.unlink(path)
        return result

    def assert_valid(self, events, container=True):
        result = self.run_checker(render(events, container))
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def assert_rejected(self, events, message):
        result = self.run_checker(render(events))
        self.assertEqual(result.returncode, 1, f"accepted a trace that should fail with: {message}")
        self.assertIn(message, result.stderr)

    def mutated(self, index, **changes):
        events = valid_trace()
        event = copy.deepcopy(events[index])
        for key, value in changes.items():
            if value is None:
                event.pop(key, None)
            else:
                event[key] = value
        events[index] = event
        return events

    def test_valid_trace_passes_with_counts(self):
        summary = self.assert_valid(valid_trace())
        self.assertEqual(summary["flows"], 1)
        self.assertEqual(summary["gpu_processes"], 1)
        self.assertEqual(summary["slices"], 3)

    def test_bare_array_container_passes(self):
        self.assert_valid(valid_trace(), container=False)

    def test_unparseable_json_exits_2(self):
        self.assertEqual(self.run_checker('{"traceEvents": [').returncode, 2)
        self.assertEqual(self.run_checker('{"traceEvents": [{"ts": NaN}]}').returncode, 2)

    def test_several_files_fail_if_any_fails(self):
        good = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        good.write(render(valid_trace()))
        good.close()
        bad = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        bad.write(render(self.mutated(6, dur=None)))
        bad.close()
        try:
            both = subprocess.run([sys.executable, CHECKER, good.name, bad.name], capture_output=True, text=True)
            only_good = subprocess.run([sys.executable, CHECKER, good.name, good.name], capture_output=True, text=True)
        finally:
            os.unlink(good.name)
            os.unlink(bad.name)
        self.assertEqual(both.returncode, 1)
        self.assertIn(bad.name, both.stderr)
        self.assertEqual(only_good.returncode, 0, only_good.stderr)

    def test_duplicate_keys_rejected(self):
        result = self.run_checker('{"traceEvents": [{"ph": "M", "ph": "X"}]}')
        self.assertEqual(result.returncode, 2)

    def test_unknown_phase(self):
        self.assert_rejected(self.mutated(6, ph="O"), "not a phase")

    def test_x_without_dur(self):
        self.assert_rejected(self.mutated(6, dur=None), "has no dur")

    def test_negative_dur(self):
        self.assert_rejected(self.mutated(7, dur="RAW:-1.000"), "negative dur")

    def test_ts_not_in_ns_precise_format(self):
        self.assert_rejected(self.mutated(7, ts="RAW:11.5"), "is not written as")
        self.assert_rejected(self.mutated(7, ts="11.000"), "is not written as")

    def test_pid_out_of_range(self):
        self.assert_rejected(self.mutated(7, pid=1 << 32), "outside 0..2^32-1")
        self.assert_rejected(self.mutated(7, pid=-1), "outside 0..2^32-1")

    def test_pid_not_integer(self):
        self.assert_rejected(self.mutated(7, pid="1234"), "pid is not an integer")

    def test_missing_tid(self):
        self.assert_rejected(self.mutated(7, tid=None), "has no tid")

    def test_metadata_name_not_allowed(self):
        events = valid_trace() + [meta("process_labels", 1234, 1234, labels="x")]
        self.assert_rejected(events, "not one the importer reads")

    def test_metadata_without_name(self):
        self.assert_rejected(self.mutated(0, args={}), "non-empty args.name")

    def test_sort_index_not_integer(self):
        self.assert_rejected(self.mutated(1, args={"sort_index": "first"}), "integer args.sort_index")

    def test_unpaired_flow(self):
        self.assert_rejected(self.mutated(8, bind_id=2), "ids must be unique and paired")

    def test_duplicated_flow_id(self):
        events = valid_trace()
        extra = copy.deepcopy(events[8])
        extra["ts"] = "RAW:40.000"
        self.assert_rejected(events + [extra], "ids must be unique and paired")

    def test_flow_ending_before_it_starts(self):
        self.assert_rejected(self.mutated(8, ts="RAW:1.000"), "before it starts")

    def test_bind_id_on_instant(self):
        self.assert_rejected(self.mutated(9, bind_id=5, flow_out=True), "only X and B slices")

    def test_flow_flag_without_bind_id(self):
        self.assert_rejected(self.mutated(7, flow_out=True), "without bind_id")

    def test_gpu_event_on_a_linux_pid(self):
        # Kineto's "kernel" does not start with "gpu": the checker knows it.
        events = self.mutated(8, pid=1234, tid=1236)
        self.assert_rejected(events, "inside the Linux pid range")

    def test_process_without_name(self):
        events = [e for i, e in enumerate(valid_trace()) if i != 0]
        self.assert_rejected(events, "no process_name")

    def test_gpu_work_before_its_call(self):
        # The kernel (correlation 1) starts before the API slice with that
        # correlation began.
        events = valid_trace()
        events[8] = {k: v for k, v in events[8].items() if k not in ("bind_id", "flow_in")}
        events[6] = {k: v for k, v in events[6].items() if k not in ("bind_id", "flow_out")}
        events[8] = dict(events[8], args={"correlation": 1, "stream": 13, "device": 0, "pid": 1234},
                         ts="RAW:9.000")
        events[6] = dict(events[6], args={"correlation": 1})
        self.assert_rejected(events, "(i) kernel 'kernel'")

    def test_two_operations_at_once_on_a_stream(self):
        events = valid_trace()
        events[8] = dict(events[8], args={"stream": 13, "device": 0, "pid": 1234})
        events.append({"ph": "X", "cat": "kernel", "name": "second", "pid": GPU_PID, "tid": 1,
                       "ts": "RAW:21.000", "dur": "RAW:1.000", "args": {"stream": 13, "device": 0, "pid": 1234}})
        self.assert_rejected(events, "(ii) kernel 'second'")

    def test_gpu_track_without_name(self):
        events = [e for i, e in enumerate(valid_trace()) if i != 4]
        self.assert_rejected(events, "GPU track pid 1000000000 tid 1 has no thread_name")

    def test_overlapping_slices_on_one_track(self):
        # Starts inside the API slice (10..15.5) and ends after it.
        self.assert_rejected(self.mutated(7, ts="RAW:15.000", dur="RAW:1.000"), "without nesting")

    def test_adjacent_slices_are_fine(self):
        self.assert_valid(self.mutated(7, ts="RAW:15.500", dur="RAW:1.000"))

    def test_unbalanced_begin_end(self):
        events = valid_trace() + [{"ph": "B", "name": "open", "pid": 1234, "tid": 1235, "ts": "RAW:50.000"}]
        self.assert_rejected(events, "B never ended")
        events = valid_trace() + [{"ph": "E", "pid": 1234, "tid": 1235, "ts": "RAW:50.000"}]
        self.assert_rejected(events, "E without a matching B")

    def test_bad_instant_scope(self):
        self.assert_rejected(self.mutated(9, s="x"), "instant scope")

    def test_args_not_object(self):
        self.assert_rejected(self.mutated(7, args=[1, 2]), "args is not an object")

    def test_counter_with_string_value(self):
        events = valid_trace() + [{"ph": "C", "name": "mem", "pid": 1234, "tid": 1234,
                                   "ts": "RAW:5.000", "args": {"bytes": "many"}}]
        self.assert_rejected(events, "is not a number")

    def test_v1_flow_pairing(self):
        start = {"ph": "s", "id": 7, "cat": "c", "name": "f", "pid": 1234, "tid": 1235, "ts": "RAW:10.000"}
        end = {"ph": "f", "bp": "e", "id": 7, "cat": "c", "name": "f", "pid": 1234, "tid": 1235, "ts": "RAW:12.000"}
        self.assert_valid(valid_trace() + [start, end])
        self.assert_rejected(valid_trace() + [start], "1 starts and 0 ends")
        loose = dict(end)
        del loose["bp"]
        self.assert_rejected(valid_trace() + [start, loose], '"bp":"e"')


if __name__ == "__main__":
    unittest.main()
