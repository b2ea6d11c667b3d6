// What the call stack tests look at: the "stack" arg of every API slice in
// `proftrace convert`'s JSON (one frame per line, root first, the API last),
// the stack records of a trace, and the source lines the test programs mark
// with "@site:NAME".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace proflaunch::e2e {

struct SliceStack {
  std::string api;                 // the slice's name
  std::vector<std::string> frames;  // root first; empty when the slice has no stack
};

struct ConvertedStacks {
  bool ok = false;
  std::string error;                // why conversion failed
  std::string proftrace_stderr;
  std::vector<SliceStack> slices;   // every API slice, in output order

  std::vector<const SliceStack*> named(const std::string& api) const;
};

// proftrace convert TRACE -o <trace>.json, then reads every API slice's stack.
ConvertedStacks convert_stacks(const std::string& trace_path);

// Record counts of a trace by kind name ("NativeStackDef", "CallStack", ...).
std::map<std::string, uint64_t> record_counts(const std::string& trace_path);

// The 1-based line of `file` that contains "@site:<name>" (0 when none).
int site_line(const std::string& file, const std::string& name);

// A frame that contains every one of these pieces.
using FrameMatch = std::vector<std::string>;

// Whether `frames` has, in this order (not necessarily adjacent), a frame
// matching each of `expected`. `why` says which one was missing.
bool contains_in_order(const std::vector<std::string>& frames, const std::vector<FrameMatch>& expected,
                       std::string* why);

// "file.cpp:<line of @site:name in path>)": how a native frame shows its line.
std::string native_line(const std::string& path, const std::string& site);

// The frames joined with newlines, for assertion messages.
std::string joined(const std::vector<std::string>& frames);

}  // namespace proflaunch::e2e
