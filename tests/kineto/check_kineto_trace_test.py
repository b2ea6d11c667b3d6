#!/usr/bin/env python3
"""Self-test of check_kineto_trace.py: a small trace shaped as the PyTorch
profiler writes it passes; each broken variant fails with its message."""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_kineto_trace.py")


def valid_trace():
    kernel_args = {"device": 0, "stream": 7, "correlation": 11, "registers per thread": 32,
                   "shared memory": 0, "blocks per SM": 0.5, "warps per SM": 4.0,
                   "grid": [66, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 13}
    return {
        "schemaVersion": 1,
        "baseTimeNanoseconds": 1696186170000000000,
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
        "deviceProperties": [{"id": 0, "name": "GPU", "totalGlobalMem": 1 << 30, "computeMajor": 9,
                              "computeMinor": 0, "numSms": 132, "warpSize": 32}],
        "traceEvents": [
            {"ph": "M", "name": "process_name", "pid": 10, "tid": 10, "args": {"name": "python"}},
            {"ph": "X", "cat": "user_annotation", "name": "step 1", "pid": 10, "tid": 10,
             "ts": 1.0, "dur": 100.0, "args": {}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10,
             "ts": 2.0, "dur": 5.0, "args": {"correlation": 11}},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 1000, "tid": 1, "ts": 10.0, "dur": 20.0,
             "args": kernel_args},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 10, "tid": 10,
             "ts": 40.0, "dur": 5.0, "args": {"correlation": 12}},
            # 2,000,000 bytes in 1 us = 2000 GB/s
            {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 1000, "tid": 1, "ts": 50.0,
             "dur": 1.0, "args": {"device": 0, "stream": 7, "correlation": 12, "bytes": 2000000,
                                  "memory bandwidth (GB/s)": 2000.0}},
            {"ph": "i", "s": "t", "name": "mark", "pid": 10, "tid": 10, "ts": 60.0},
        ],
    }


class CheckerTest(unittest.TestCase):
    def run_checker(self, document, *flags, text=None):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(text if text is not None else json.dumps(document))
            path = f.name
        try:
            result = subprocess.run([sys.executable, CHECKER, path, *flags], capture_output=True, text=True)
        finally:
            os.unlink(path)
        return result.returncode, result.stdout + result.stderr

    def assert_rejected(self, document, message, *flags):
        code, output = self.run_checker(document, *flags)
        self.assertEqual(code, 1, output)
        self.assertIn(message, output)

    def event(self, document, name):
        return next(e for e in document["traceEvents"] if e.get("name") == name)

    def test_valid_trace_passes(self):
        code, output = self.run_checker(valid_trace(), "--require-categories", "kernel,gpu_memcpy,cuda_runtime",
                                        "--require-kernel-details", "--require-rank", "0",
                                        "--require-world-size", "2", "--require-backend", "nccl",
                                        "--require-device-properties", "--summary")
        self.assertEqual(code, 0, output)
        self.assertIn('"kernel": 1', output)

    def test_unparseable_exits_2(self):
        code, _ = self.run_checker(None, text="{not json")
        self.assertEqual(code, 2)

    def test_bare_array_is_not_a_kineto_trace(self):
        code, output = self.run_checker(valid_trace()["traceEvents"])
        self.assertEqual(code, 1, output)

    def test_distributed_info_after_trace_events(self):
        trace = valid_trace()
        info = trace.pop("distributedInfo")
        trace["distributedInfo"] = info
        self.assert_rejected(trace, "comes after \"traceEvents\"")

    def test_rank_written_without_a_space_is_not_found_by_hta(self):
        document = valid_trace()
        document["distributedInfo"]["rank"] = 3
        document["distributedInfo"]["world_size"] = 4
        compact = json.dumps(document, separators=(",", ":"))
        code, output = self.run_checker(document, text=compact)
        self.assertEqual(code, 1, output)
        self.assertIn("HTA reads every such file as rank 0", output)
        code, output = self.run_checker(document, text=json.dumps(document))
        self.assertEqual(code, 0, output)

    def test_an_earlier_rank_text_hides_distributed_info(self):
        document = valid_trace()
        document["traceEvents"][0]["args"]["rank"] = 5
        text = json.dumps(document).replace('"distributedInfo"', '"x": {"rank": 5}, "distributedInfo"', 1)
        code, output = self.run_checker(document, text=text)
        self.assertEqual(code, 1, output)
        self.assertIn("HTA reads rank 5", output)

    def test_rank_missing(self):
        trace = valid_trace()
        del trace["distributedInfo"]["rank"]
        self.assert_rejected(trace, "HTA needs an integer >= 0")

    def test_world_size_not_above_rank(self):
        trace = valid_trace()
        trace["distributedInfo"]["world_size"] = 0
        self.assert_rejected(trace, "not an integer above rank")

    def test_required_rank(self):
        trace = valid_trace()
        self.assert_rejected(trace, "distributedInfo.rank is 0, expected 3", "--require-rank", "3")
        del trace["distributedInfo"]
        self.assert_rejected(trace, "distributedInfo.rank is None", "--require-rank", "0")

    def test_device_properties_not_indexed_by_id(self):
        trace = valid_trace()
        trace["deviceProperties"][0]["id"] = 1
        self.assert_rejected(trace, "not its index")

    def test_device_property_of_another_name(self):
        trace = valid_trace()
        trace["deviceProperties"][0]["sm_count"] = 132
        self.assert_rejected(trace, "not one of Kineto's keys")

    def test_device_properties_required(self):
        trace = valid_trace()
        trace["deviceProperties"] = []
        self.assert_rejected(trace, "no deviceProperties entry", "--require-device-properties")

    def test_event_without_name(self):
        trace = valid_trace()
        del trace["traceEvents"][-1]["name"]
        self.assert_rejected(trace, "no string name")

    def test_x_without_cat(self):
        trace = valid_trace()
        del self.event(trace, "step 1")["cat"]
        self.assert_rejected(trace, "X event without a string cat")

    def test_ts_as_string(self):
        trace = valid_trace()
        self.event(trace, "k")["ts"] = "10.0"
        self.assert_rejected(trace, "ts is '10.0'")

    def test_string_stream(self):
        trace = valid_trace()
        self.event(trace, "k")["args"]["stream"] = "legacy default"
        self.assert_rejected(trace, "is not an integer")

    def test_host_event_with_stream(self):
        trace = valid_trace()
        self.event(trace, "cudaLaunchKernel")["args"]["stream"] = 7
        self.assert_rejected(trace, "HTA would take it for GPU work")

    def test_kernel_without_positive_stream(self):
        trace = valid_trace()
        self.event(trace, "k")["args"]["stream"] = 0
        self.assert_rejected(trace, "not an integer > 0")

    def test_kernel_without_its_launch(self):
        trace = valid_trace()
        self.event(trace, "cudaLaunchKernel")["args"]["correlation"] = 99
        self.assert_rejected(trace, "correlation 11 names 0 cuda_runtime/cuda_driver events")

    def test_unattributed_kernel_needs_no_launch(self):
        trace = valid_trace()
        kernel = self.event(trace, "k")
        del kernel["args"]["correlation"]
        kernel["args"]["unattributed"] = True
        code, output = self.run_checker(trace, "--require-kernel-details")
        self.assertEqual(code, 0, output)

    def test_grid_as_text(self):
        trace = valid_trace()
        self.event(trace, "k")["args"]["grid"] = "(66,1,1)"
        self.assert_rejected(trace, "not [x, y, z]")

    def test_occupancy_as_fraction(self):
        trace = valid_trace()
        self.event(trace, "k")["args"]["est. achieved occupancy %"] = 0.13
        self.assert_rejected(trace, "not an integer >= 0")

    def test_kernel_details_required(self):
        trace = valid_trace()
        del self.event(trace, "k")["args"]["registers per thread"]
        self.assertEqual(self.run_checker(trace)[0], 0)
        self.assert_rejected(trace, "no 'registers per thread'", "--require-kernel-details")

    def test_device_outside_device_properties(self):
        trace = valid_trace()
        self.event(trace, "k")["args"]["device"] = 1
        self.assert_rejected(trace, "not in deviceProperties")

    def test_bandwidth_that_says_dur_is_not_microseconds(self):
        trace = valid_trace()
        self.event(trace, "Memcpy HtoD")["dur"] = 1000.0  # as if in ns
        self.assert_rejected(trace, "is dur in microseconds?")

    def test_base_time_not_an_integer(self):
        trace = valid_trace()
        trace["baseTimeNanoseconds"] = "1696186170000000000"
        self.assert_rejected(trace, "baseTimeNanoseconds is '1696186170000000000'")

    def test_base_time_after_trace_events(self):
        trace = valid_trace()
        trace["baseTimeNanoseconds"] = trace.pop("baseTimeNanoseconds")
        self.assert_rejected(trace, '"baseTimeNanoseconds" comes after "traceEvents"')

    def test_collective_slice_repeating_its_launchs_correlation(self):
        trace = valid_trace()
        trace["traceEvents"].insert(2, {"ph": "X", "cat": "collective", "name": "ncclAllReduce", "pid": 10,
                                        "tid": 10, "ts": 1.5, "dur": 6.0, "args": {"correlation": 11}})
        self.assert_rejected(trace, "correlation 11 is on 2 host events")
        trace["traceEvents"][2]["args"] = {"kernel_correlation": 11}
        code, output = self.run_checker(trace)
        self.assertEqual(code, 0, output)

    def test_host_function_drawn_as_gpu_work(self):
        trace = valid_trace()
        trace["traceEvents"].insert(4, {"ph": "X", "cat": "gpu.host_function", "name": "done", "pid": 1000,
                                        "tid": 1, "ts": 31.0, "dur": 2.0,
                                        "args": {"host function stream": 7, "launch correlation": 11}})
        code, output = self.run_checker(trace)
        self.assertEqual(code, 0, output)
        trace["traceEvents"][4]["args"] = {"stream": 7, "correlation": 11}
        self.assert_rejected(trace, "HTA would count it as GPU compute")

    def rank_files(self, shift_us=0.0, base_delta=0):
        paths = []
        for rank in (0, 1):
            trace = valid_trace()
            trace["distributedInfo"]["rank"] = rank
            trace["baseTimeNanoseconds"] += base_delta * rank
            kernel = self.event(trace, "k")
            kernel["args"]["collective"] = "0x5/1"
            kernel["ts"] += shift_us * rank
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump(trace, f)
                paths.append(f.name)
        return paths

    def check_pair(self, paths):
        try:
            result = subprocess.run([sys.executable, CHECKER, paths[1], "--aligned-with", paths[0]],
                                    capture_output=True, text=True)
        finally:
            for path in paths:
                os.unlink(path)
        return result.returncode, result.stdout + result.stderr

    def test_rank_files_on_one_clock(self):
        code, output = self.check_pair(self.rank_files(shift_us=30.0))
        self.assertEqual(code, 0, output)

    def test_rank_files_each_from_its_own_zero(self):
        code, output = self.check_pair(self.rank_files(shift_us=2_000_000.0))
        self.assertEqual(code, 1, output)
        self.assertIn("the files are not on one clock", output)

    def test_rank_files_with_different_base_times(self):
        code, output = self.check_pair(self.rank_files(base_delta=1000))
        self.assertEqual(code, 1, output)
        self.assertIn("the files do not share an origin", output)

    def test_missing_category(self):
        self.assert_rejected(valid_trace(), "no X event of category 'gpu_memset'",
                             "--require-categories", "kernel,gpu_memset")

    # ProfilerStep#N and cuda_sync, as Kineto writes them.
    def with_steps_and_syncs(self):
        document = valid_trace()
        events = document["traceEvents"]
        for n, ts in ((3, 1.0), (4, 30.0), (5, 60.0)):
            events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "pid": 10,
                           "tid": 10, "ts": ts, "dur": 29.0, "args": {"step_source": "nvtx"}})
        events += [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 10, "tid": 10,
             "ts": 70.0, "dur": 5.0, "args": {"correlation": 13}},
            {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 1000, "tid": 2, "ts": 70.0,
             "dur": 5.0, "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 13,
                                  "device": 0, "context": 1}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 10, "tid": 10,
             "ts": 76.0, "dur": 1.0, "args": {"correlation": 14}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventSynchronize", "pid": 10, "tid": 10,
             "ts": 78.0, "dur": 5.0, "args": {"correlation": 15}},
            {"ph": "X", "cat": "cuda_sync", "name": "Event Sync", "pid": 1000, "tid": 2, "ts": 78.0,
             "dur": 5.0, "args": {"cuda_sync_kind": "Event Sync", "stream": -1, "correlation": 15,
                                  "device": 0, "context": 1, "wait_on_stream": 7,
                                  "wait_on_cuda_event_record_corr_id": 14, "wait_on_cuda_event_id": 2}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 10, "tid": 10,
             "ts": 84.0, "dur": 5.0, "args": {"correlation": 16}},
            {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 1000, "tid": 2, "ts": 84.0,
             "dur": 5.0, "args": {"cuda_sync_kind": "Context Sync", "stream": -1, "correlation": 16,
                                  "device": 0, "context": 1}},
        ]
        return document

    def test_steps_and_syncs_pass(self):
        code, output = self.run_checker(self.with_steps_and_syncs(), "--require-steps", "3",
                                        "--require-sync-kinds", "Stream Sync,Event Sync,Context Sync")
        self.assertEqual(code, 0, output)

    def test_step_count_required(self):
        self.assert_rejected(self.with_steps_and_syncs(), "3 ProfilerStep slices, expected 4", "--require-steps", "4")

    def test_step_without_number(self):
        document = self.with_steps_and_syncs()
        self.event(document, "ProfilerStep#4")["name"] = "ProfilerStep#four"
        self.assert_rejected(document, "not ProfilerStep#<integer>")

    def test_step_of_another_category(self):
        document = self.with_steps_and_syncs()
        self.event(document, "ProfilerStep#4")["cat"] = "cpu_op"
        self.assert_rejected(document, "category 'cpu_op', not user_annotation")

    def test_steps_on_two_threads(self):
        document = self.with_steps_and_syncs()
        self.event(document, "ProfilerStep#4")["tid"] = 11
        self.assert_rejected(document, "ProfilerStep slices on 2 threads")

    def test_steps_numbered_backwards(self):
        document = self.with_steps_and_syncs()
        self.event(document, "ProfilerStep#5")["name"] = "ProfilerStep#2"
        self.assert_rejected(document, "steps are not numbered increasingly")

    def test_overlapping_steps(self):
        document = self.with_steps_and_syncs()
        self.event(document, "ProfilerStep#3")["dur"] = 40.0
        self.assert_rejected(document, "ends after")

    def test_sync_of_another_name(self):
        document = self.with_steps_and_syncs()
        self.event(document, "Context Sync")["name"] = "Device Sync"
        self.assert_rejected(document, "not one of Kineto's names")

    def test_sync_kind_not_its_name(self):
        document = self.with_steps_and_syncs()
        self.event(document, "Stream Sync")["args"]["cuda_sync_kind"] = "stream"
        self.assert_rejected(document, "cuda_sync_kind 'stream', not its name")

    def test_sync_stream_as_text(self):
        document = self.with_steps_and_syncs()
        self.event(document, "Stream Sync")["args"]["stream"] = "7"
        self.assert_rejected(document, "is not -1 or an integer > 0")

    def test_context_sync_on_a_stream(self):
        document = self.with_steps_and_syncs()
        self.event(document, "Context Sync")["args"]["stream"] = 7
        self.assert_rejected(document, "a context sync has none (-1)")

    def test_sync_without_device(self):
        document = self.with_steps_and_syncs()
        del self.event(document, "Stream Sync")["args"]["device"]
        self.assert_rejected(document, "device None is not an integer >= 0")

    def test_sync_without_context(self):
        document = self.with_steps_and_syncs()
        del self.event(document, "Stream Sync")["args"]["context"]
        self.assert_rejected(document, "context None is not an integer")

    def test_sync_without_its_host_call(self):
        document = self.with_steps_and_syncs()
        self.event(document, "Stream Sync")["args"]["correlation"] = 99
        self.assert_rejected(document, "correlation 99 names 0 cuda_runtime/cuda_driver events")

    def test_event_sync_without_wait_args(self):
        document = self.with_steps_and_syncs()
        del self.event(document, "Event Sync")["args"]["wait_on_cuda_event_id"]
        self.assert_rejected(document, "wait_on_cuda_event_id None is not an integer")

    def test_event_sync_waiting_on_a_record_not_in_the_trace(self):
        document = self.with_steps_and_syncs()
        self.event(document, "Event Sync")["args"]["wait_on_cuda_event_record_corr_id"] = 98
        self.assert_rejected(document, "wait_on_cuda_event_record_corr_id 98 names no host event")

    def test_event_sync_waiting_on_a_call_that_records_no_event(self):
        document = self.with_steps_and_syncs()
        self.event(document, "Event Sync")["args"]["wait_on_cuda_event_record_corr_id"] = 13
        self.assert_rejected(document, "wait_on_cuda_event_record_corr_id 13 names 'cudaStreamSynchronize', "
                             "not an event record")

    def test_two_waits_on_one_record_name_different_streams(self):
        document = self.with_steps_and_syncs()
        sync = dict(self.event(document, "Event Sync"))
        sync["args"] = dict(sync["args"], correlation=17, wait_on_stream=-1)
        document["traceEvents"] += [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventSynchronize", "pid": 10, "tid": 10,
             "ts": 90.0, "dur": 1.0, "args": {"correlation": 17}}, sync]
        self.assert_rejected(document, "wait_on_stream -1 for record 14, 7 in")

    def test_unknown_event_record_when_required(self):
        document = self.with_steps_and_syncs()
        code, output = self.run_checker(document, "--require-event-records")
        self.assertEqual(code, 0, output)
        self.event(document, "Event Sync")["args"]["wait_on_cuda_event_record_corr_id"] = -1
        self.assert_rejected(document, "the event's record is unknown", "--require-event-records")

    def test_event_sync_waiting_on_a_stream_without_work(self):
        document = self.with_steps_and_syncs()
        self.event(document, "Event Sync")["args"]["wait_on_stream"] = 8
        self.assert_rejected(document, "wait_on_stream 8 has no GPU work")

    def test_sync_kind_required(self):
        self.assert_rejected(self.with_steps_and_syncs(), "no cuda_sync event 'Stream Wait Event'",
                             "--require-sync-kinds", "Stream Wait Event")


if __name__ == "__main__":
    unittest.main()
