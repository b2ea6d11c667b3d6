#!/usr/bin/env python3
"""Self-test of gpu_invariants.py, through the JSON reader pftrace_check.py
uses: a trace that holds the invariants passes, and each rule rejects a trace
that breaks it (so the e2e checks cannot pass everything)."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_invariants  # noqa: E402
import pftrace_check  # noqa: E402

HOST_PID = 1234
GPU_PID = 1_000_000_000


def api(name, ts_us, dur_us, correlation):
    return {"ph": "X", "cat": "cuda_driver", "name": name, "pid": HOST_PID, "tid": 1235, "ts": ts_us,
            "dur": dur_us, "args": {"correlation": correlation}}


def gpu(cat, name, ts_us, dur_us, correlation, stream=7, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": GPU_PID, "tid": tid, "ts": ts_us, "dur": dur_us,
            "args": dict({"device": 0, "stream": stream, "correlation": correlation, "pid": HOST_PID}, **args)}


def valid_events():
    """A copy then a kernel on stream 7, each after its call; a kernel on stream 8 that overlaps them."""
    return [
        {"ph": "M", "name": "process_name", "pid": HOST_PID, "tid": HOST_PID, "args": {"name": "train"}},
        {"ph": "M", "name": "thread_name", "pid": GPU_PID, "tid": 1, "args": {"name": "Stream 7"}},
        {"ph": "M", "name": "thread_name", "pid": GPU_PID, "tid": 2, "args": {"name": "Stream 8"}},
        api("cuMemcpyHtoDAsync", "10.000", "2.000", 1),
        api("cuLaunchKernel", "13.000", "2.000", 2),
        api("cuLaunchKernel", "16.000", "2.000", 3),
        gpu("gpu_memcpy", "Memcpy HtoD", "11.000", "5.000", 1),
        gpu("kernel", "gemm", "16.000", "4.000", 2),  # starts as the copy ends
        gpu("kernel", "other", "17.000", "10.000", 3, stream=8, tid=2),
        # Two nodes of one graph launch run at once on their stream: allowed.
        api("cuGraphLaunch", "30.000", "1.000", 4),
        gpu("kernel", "node a", "31.000", "5.000", 4, graph_node="0x1"),
        gpu("kernel", "node b", "32.000", "5.000", 4, graph_node="0x2"),
    ]


def problems_of(events):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"traceEvents": events}, f)
        path = f.name
    try:
        return gpu_invariants.problems(pftrace_check.json_events(path)["slices"])
    finally:
        os.unlink(path)


class GpuInvariantsTest(unittest.TestCase):
    def test_a_trace_that_holds_them_passes(self):
        self.assertEqual(problems_of(valid_events()), [])

    def test_an_operation_before_its_call_fails_rule_i(self):
        events = valid_events()
        events[6] = gpu("gpu_memcpy", "Memcpy HtoD", "9.500", "5.000", 1)  # its call began at 10
        problems = problems_of(events)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("(i)", problems[0])
        self.assertIn("500 ns before its call 'cuMemcpyHtoDAsync'", problems[0])

    def test_a_host_function_is_checked_by_its_launch_correlation(self):
        events = valid_events()
        host_function = gpu("gpu.host_function", "cb", "12.000", "0.500", None)
        del host_function["args"]["correlation"], host_function["args"]["stream"]
        host_function["args"].update({"launch correlation": 2, "host function stream": 9})
        problems = problems_of(events + [host_function])
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("(i)", problems[0])

    def test_two_operations_overlapping_on_a_stream_fail_rule_ii(self):
        events = valid_events()
        events[7] = gpu("kernel", "gemm", "15.999", "4.000", 2, tid=3)  # another track, same stream
        problems = problems_of(events)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("(ii)", problems[0])
        self.assertIn("starts 1 ns before", problems[0])

    def test_a_host_function_overlapping_a_kernel_fails_rule_ii(self):
        # A host function is timed by events and its neighbours by CUPTI:
        # proftrace places it after the kernel before it whatever order
        # their records arrive in, so even the clock mappings' few us of
        # error may not show as an overlap.
        events = valid_events()
        events[7] = gpu("kernel", "gemm", "16.000", "10.000", 2)  # [16, 26) us on stream 7
        close = gpu("gpu.host_function", "cb", "22.500", "1.000", 5)
        problems = problems_of(events + [close])
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("(ii)", problems[0])
        self.assertIn("starts 3500 ns before", problems[0])
        after = gpu("gpu.host_function", "cb", "26.000", "1.000", 5)
        self.assertEqual(problems_of(events + [after]), [])

    def test_streams_of_different_processes_are_apart(self):
        events = valid_events()
        other = gpu("kernel", "gemm", "12.000", "4.000", 2)
        other["args"]["pid"] = 99
        self.assertEqual(problems_of(events + [other]), [])


if __name__ == "__main__":
    unittest.main()
