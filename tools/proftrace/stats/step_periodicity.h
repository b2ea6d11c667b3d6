// Steps from a program's own rhythm, for traces without NVTX step ranges:
// a training loop launches the same kernels in the same order every step,
// so the sequence of kernel names on the launching thread is periodic.
//
// The rule, on a sequence s[0..n) of kernels (function handles) in launch
// order, at most kPeriodicityPrefix of them:
//  - the first n/10 launches are warm-up and are not compared;
//  - the period p is the smallest p such that s[i] == s[i + p] for at least
//    90% of i in [w, n - p), with at least 3 periods after the warm-up
//    (n - w >= 3p); only p with s[w + p] == s[w] are tried;
//  - the step's first kernel is, among the kernels that occur exactly once
//    in s[w, w + p), the one that first appears earliest in the sequence
//    (the loop's first kernel, as warm-up tends to run other kernels);
//  - no such p, or no kernel that occurs once per period: not periodic.
// Limits: a step whose kernels change from step to step (dynamic shapes,
// data-dependent branches) by more than 10% is not found; a step with more
// than n/3 launches in the prefix is not found either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace proflaunch::tools::stats {

inline constexpr size_t kPeriodicityPrefix = 100000;

struct Periodicity {
  size_t period = 0;           // launches per step
  uint64_t first_kernel = 0;   // the launch that begins a step
};

std::optional<Periodicity> find_periodicity(const std::vector<uint64_t>& kernels);

}  // namespace proflaunch::tools::stats
