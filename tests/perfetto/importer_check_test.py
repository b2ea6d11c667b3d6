#!/usr/bin/env python3
"""Self-test of importer_check.py: a small JSON trace that Perfetto's
importer reads as pftrace_check reads it passes, and each way the importer's
view can part from ours is reported (so the e2e check cannot pass everything).

Needs Perfetto's trace_processor_shell ($TRACE_PROCESSOR); skipped (exit 77)
without it."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importer_check  # noqa: E402
import pftrace_check  # noqa: E402

SHELL = os.environ.get("TRACE_PROCESSOR", "")
PID, TID = 1234, 1235
GPU_PID = 1_000_000_000


def events():
    return [
        {"ph": "M", "name": "process_name", "pid": PID, "tid": PID, "args": {"name": "train"}},
        {"ph": "M", "name": "thread_name", "pid": PID, "tid": TID, "args": {"name": "loader"}},
        {"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": 0, "args": {"name": "GPU 0"}},
        {"ph": "M", "name": "thread_name", "pid": GPU_PID, "tid": 7, "args": {"name": "Stream 7"}},
        {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": PID, "tid": TID, "ts": "10.000",
         "dur": "2.500", "bind_id": 1, "flow_out": True, "args": {"correlation": 1, "grid": [2, 1, 1], "async": True}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": GPU_PID, "tid": 7, "ts": "11.250", "dur": "4.000",
         "bind_id": 1, "flow_in": True,
         "args": {"correlation": 1, "stream": 7, "est. achieved occupancy %": 50, "blocks per SM": 0.125}},
        {"ph": "i", "s": "t", "cat": "cpu_sample", "name": "CPU sample", "pid": PID, "tid": TID, "ts": "13.000",
         "args": {"stack": "main\nstep"}},
        {"ph": "C", "name": "GPU memory", "pid": PID, "tid": PID, "ts": "12.000", "args": {"bytes": 4096}},
    ]


class ImporterCheckTest(unittest.TestCase):
    def setUp(self):
        if not SHELL or not os.access(SHELL, os.X_OK):
            self.skipTest("trace_processor_shell not found ($TRACE_PROCESSOR)")
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def problems(self, trace, expected_from=None):
        path = os.path.join(self.dir.name, "t.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)
        # What pftrace_check reads in the file (or in another one, to make
        # our side expect something the importer does not build).
        source = path
        if expected_from is not None:
            source = os.path.join(self.dir.name, "expected.json")
            with open(source, "w") as f:
                json.dump({"traceEvents": expected_from}, f)
        expected = importer_check.expected_from_json(pftrace_check.json_events(source))
        return importer_check.problems(SHELL, "JSON", path, expected)

    def test_a_trace_read_alike_passes(self):
        self.assertEqual(self.problems(events()), [])

    def test_a_flow_the_importer_drops_is_reported(self):
        # The kernel begins where its launch call begins: the importer binds
        # the arrow's end only to a slice that begins after its start.
        trace = events()
        trace[5]["ts"] = "10.000"
        found = self.problems(trace)
        self.assertTrue(any("flows differ: 1 expected but not imported" in p for p in found), found)

    def test_a_slice_or_arg_read_differently_is_reported(self):
        changed = events()
        changed[5]["args"]["stream"] = 8
        found = self.problems(events(), expected_from=changed)
        self.assertTrue(any("slices differ" in p for p in found), found)
        renamed = events()
        renamed[5]["name"] = "gemm2"
        self.assertTrue(any("slices differ" in p for p in self.problems(events(), expected_from=renamed)))

    def test_names_and_counters_are_compared(self):
        named = events()
        named[1]["args"]["name"] = "worker"
        found = self.problems(events(), expected_from=named)
        self.assertTrue(any("thread names differ" in p for p in found), found)
        counted = events()
        counted[-1]["args"]["bytes"] = 8192
        found = self.problems(events(), expected_from=counted)
        self.assertTrue(any("counter values differ" in p for p in found), found)

    def test_an_error_stat_is_reported(self):
        trace = events()
        trace.append({"ph": "X", "cat": "cuda_driver", "name": "cuMemAlloc", "pid": PID, "tid": TID, "ts": "20.000",
                      "dur": "-1.000"})  # the importer drops it and counts it
        found = self.problems(trace)
        self.assertTrue(any("error or data-loss stats" in p for p in found), found)

    def test_a_file_the_importer_cannot_read_is_reported(self):
        # The shell loads a file it cannot parse as an empty trace, with no
        # error stat: what is missing is found by comparing.
        path = os.path.join(self.dir.name, "broken.pftrace")
        with open(path, "wb") as f:
            f.write(b"\x0a\xff\xff\xff\xff\x0fnot a trace")
        expected = {"slices": [importer_check.signature((PID, "loader"), 10000, 2500, "cuLaunchKernel", "cuda_driver",
                                                        {})],
                    "flows": set(), "counters": [], "samples": [], "processes": {(PID, "train")}, "threads": set()}
        found = importer_check.problems(SHELL, "protobuf", path, expected)
        self.assertTrue(any("slices differ: 1 expected but not imported" in p for p in found), found)
        self.assertTrue(any("process names differ" in p for p in found), found)

    def test_protobuf_names_are_sanitized_as_the_importer_does(self):
        self.assertEqual(importer_check.sanitized("est. achieved occupancy %"), "est_ achieved occupancy %")
        self.assertEqual(importer_check.flat_args({"grid": [1, 2], "a.b": True}, importer_check.sanitized),
                         (("a_b", "true"), ("grid[0]", "1"), ("grid[1]", "2")))


if __name__ == "__main__":
    result = unittest.main(exit=False).result
    if result.skipped and not result.failures and not result.errors and result.testsRun == len(result.skipped):
        sys.exit(77)
    sys.exit(0 if result.wasSuccessful() else 1)
