#include "tools/proftrace/stacks/stack_formatter.h"

#include <cstdio>

#include "tools/proftrace/demangle.h"
#include "tools/proftrace/stacks/runtime_modules.h"

namespace proflaunch::tools {
namespace {

std::string base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The function one run of Python frames executes in (3.9 to 3.13). Exactly
// it: an interpreter with debug info (pyenv's) also names the inline
// _PyEval_EvalFrame wrapper in its caller's frame, which runs nothing.
bool is_interpreter_loop(std::string_view function) { return function == "_PyEval_EvalFrameDefault"; }

std::string frame_text(std::string_view function, std::string_view file, uint32_t line,
                       const std::string& location, bool inlined) {
  std::string text;
  if (!function.empty()) {
    text = std::string(function) + " (";
    text += !file.empty() && line != 0 ? base_name(file) + ":" + std::to_string(line) : location;
    text += ")";
  } else if (!file.empty() && line != 0) {
    text = location + " (" + base_name(file) + ":" + std::to_string(line) + ")";
  } else {
    text = location;
  }
  if (inlined) text += " [inlined]";
  return text;
}

}  // namespace

std::string python_frame_text(const SectionModel& section, const format::PythonFrame& frame) {
  std::string text(section.string(frame.file_string));
  if (text.empty()) text = "?";
  if (frame.line >= 0) text += ":" + std::to_string(frame.line);
  const std::string_view function = section.string(frame.function_string);
  if (!function.empty()) text += " " + std::string(function);
  return text;
}

void StackFormatter::add_address_frames(const SectionModel& section,
                                        const symbols::NativeFrameRef& ref,
                                        std::vector<NativeFrame>& out) {
  std::string path;
  std::string location;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(ref.address));
  location = hex;
  const symbols::ModuleInfo* module = nullptr;
  if (ref.module >= 0) {
    module = &section.stacks.modules()[static_cast<size_t>(ref.module)];
    path = std::string(section.string(module->path_string));
    location = symbols::module_offset_text(path, *module, ref.address);
  }
  const bool vendor = is_runtime_or_vendor_module(path);

  const auto embedded = section.stacks.embedded_symbols(ref.address);
  if (!embedded.empty()) {
    for (size_t i = 0; i < embedded.size(); ++i) {
      const auto& symbol = embedded[i];
      const std::string_view function = section.string(symbol.function_string);
      const std::string_view file = section.string(symbol.file_string);
      out.push_back({frame_text(function, file, symbol.line, location, i + 1 < embedded.size()),
                     is_interpreter_loop(function), vendor, ref.module, std::string(function), std::string(file),
                     symbol.line});
    }
    return;
  }
  if (module != nullptr) {
    const symbols::SymbolFrames& local = symbolizer_.symbolize(path, *module, ref.address);
    for (size_t i = 0; i < local.size(); ++i) {
      out.push_back({frame_text(local[i].function, local[i].file, local[i].line, location, i + 1 < local.size()),
                     is_interpreter_loop(local[i].function), vendor, ref.module, local[i].function, local[i].file,
                     local[i].line});
    }
    if (!local.empty()) return;
  }
  out.push_back({location, false, vendor, ref.module, {}, {}, 0});
}

const std::vector<StackFormatter::NativeFrame>& StackFormatter::native_frames(
    const SectionModel& section, uint32_t id) {
  const auto key = std::make_pair(section.section_id, id);
  auto found = native_cache_.find(key);
  if (found != native_cache_.end()) return found->second;
  std::vector<NativeFrame> frames;
  if (const symbols::NativeStackInfo* stack = section.stacks.native(id)) {
    for (const symbols::NativeFrameRef& ref : stack->frames) add_address_frames(section, ref, frames);
    if (stack->truncated) frames.push_back({"...", false, false, -1, {}, {}, 0});
  }
  return native_cache_.emplace(key, std::move(frames)).first->second;
}

std::vector<StackFormatter::CallSite> StackFormatter::sites(const SectionModel& section, uint32_t native_stack,
                                                             uint32_t python_stack) {
  auto python_site = [&](const format::PythonFrame& frame) {
    const std::string file(section.string(frame.file_string));
    return CallSite{python_frame_text(section, frame), std::string(section.string(frame.function_string)), file,
                    frame.line > 0 ? static_cast<uint32_t>(frame.line) : 0u, python_package(file), true};
  };
  auto native_site = [&](const NativeFrame& frame) {
    std::string module;
    if (frame.module >= 0)
      module = base_name(section.string(section.stacks.modules()[static_cast<size_t>(frame.module)].path_string));
    return CallSite{frame.text, frame.function, frame.file, frame.line, module, false};
  };
  // Root-first Python runs: each starts at an entry frame (where C entered
  // the interpreter) and is what one _PyEval_EvalFrameDefault frame ran.
  std::vector<std::vector<CallSite>> runs;
  if (const symbols::PythonStackInfo* python = section.stacks.python(python_stack)) {
    if (python->truncated) runs.push_back({CallSite{"...", {}, {}, 0, {}, false}});
    for (auto it = python->frames.rbegin(); it != python->frames.rend(); ++it) {
      if (runs.empty() || (it->flags & format::kPythonFrameEntry) != 0) runs.emplace_back();
      runs.back().push_back(python_site(*it));
    }
  }
  std::vector<NativeFrame> native;  // root first
  if (native_stack != 0) {
    const auto& innermost_first = native_frames(section, native_stack);
    native.assign(innermost_first.rbegin(), innermost_first.rend());
  }
  size_t interpreter_frames = 0;
  int32_t interpreter_module = -1;
  for (const NativeFrame& frame : native) {
    interpreter_frames += frame.interpreter;
    if (frame.interpreter) interpreter_module = frame.module;
  }
  // The interpreter's own plumbing between Python frames says nothing the
  // Python frames do not.
  auto plumbing = [&](const NativeFrame& frame) {
    return !runs.empty() && interpreter_module >= 0 && frame.module == interpreter_module;
  };

  std::vector<CallSite> out;
  if (interpreter_frames > 0 && interpreter_frames <= runs.size()) {
    // Runs the native stack does not reach (cut at the depth limit) are the
    // outermost ones; the others replace their interpreter frames in order.
    const size_t unmatched = runs.size() - interpreter_frames;
    for (size_t r = 0; r < unmatched; ++r) out.insert(out.end(), runs[r].begin(), runs[r].end());
    size_t next_run = unmatched;
    bool before_first_interpreter_frame = true;
    for (const NativeFrame& frame : native) {
      if (frame.interpreter) {
        const auto& run = runs[next_run++];
        out.insert(out.end(), run.begin(), run.end());
        before_first_interpreter_frame = false;
      } else if ((!before_first_interpreter_frame || unmatched == 0) && !plumbing(frame)) {
        // Native frames before the interpreter (libc's start) are kept only
        // when no Python frame had to go before them.
        out.push_back(native_site(frame));
      }
    }
  } else {
    for (const auto& run : runs) out.insert(out.end(), run.begin(), run.end());
    // Without interpreter frames to place them, Python frames sit at the
    // root: only native frames called from Python (after the innermost
    // interpreter frame) follow them.
    size_t start = 0;
    if (!runs.empty())
      for (size_t i = 0; i < native.size(); ++i)
        if (native[i].interpreter) start = i + 1;
    for (size_t i = start; i < native.size(); ++i)
      if (!plumbing(native[i])) out.push_back(native_site(native[i]));
  }
  return out;
}

std::vector<std::string> StackFormatter::frames(const SectionModel& section, uint32_t native_stack,
                                                uint32_t python_stack, std::string_view leaf) {
  std::vector<std::string> out;
  for (CallSite& site : sites(section, native_stack, python_stack)) out.push_back(std::move(site.text));
  if (!leaf.empty() && !out.empty()) out.emplace_back(leaf);
  return out;
}

std::string StackFormatter::text(const SectionModel& section, uint32_t native_stack,
                                 uint32_t python_stack, std::string_view leaf) {
  std::string joined;
  for (const std::string& frame : frames(section, native_stack, python_stack, leaf)) {
    if (!joined.empty()) joined += '\n';
    joined += frame;
  }
  return joined;
}

std::string StackFormatter::call_site(const SectionModel& section, uint32_t native_stack,
                                      uint32_t python_stack) {
  return attribute(section, native_stack, python_stack).text;
}

namespace {
bool is_toolkit_inline_wrapper(const std::string& function, const std::string& file) {
  if (function.rfind("__cudaLaunchKernel_helper", 0) == 0) return true;
  const std::string name = base_name(file);
  return name == "cuda_runtime.h" || (name == "device_functions.h" && function.rfind("__cuda", 0) == 0);
}
}  // namespace

StackFormatter::CallSite StackFormatter::attribute(const SectionModel& section, uint32_t native_stack,
                                                   uint32_t python_stack) {
  if (const symbols::PythonStackInfo* python = section.stacks.python(python_stack)) {
    if (!python->frames.empty()) {
      const format::PythonFrame& frame = python->frames.front();
      const std::string file(section.string(frame.file_string));
      return {python_frame_text(section, frame), std::string(section.string(frame.function_string)), file,
              frame.line > 0 ? static_cast<uint32_t>(frame.line) : 0u, python_package(file), true};
    }
  }
  if (native_stack == 0) return {};
  const auto& innermost_first = native_frames(section, native_stack);
  auto site_of = [&](const NativeFrame& frame) {
    std::string module;
    if (frame.module >= 0)
      module = base_name(section.string(section.stacks.modules()[static_cast<size_t>(frame.module)].path_string));
    return CallSite{frame.text, frame.function, frame.file, frame.line, module, false};
  };
  const NativeFrame* outermost_library_frame = nullptr;
  std::string stub_kernel;  // the kernel of the stub just stepped over
  for (const NativeFrame& frame : innermost_first) {
    if (frame.text == "...") continue;
    if (frame.runtime_or_vendor) {
      outermost_library_frame = &frame;
      continue;
    }
    // nvcc's generated launch stubs (__device_stub__<mangled kernel>) are
    // not where the user launched from: their caller is. Unless that caller
    // is the host function nvcc generates with the kernel's own name (its
    // line is the kernel's definition): then the caller's caller is.
    if (frame.text.rfind("__device_stub_", 0) == 0) {
      const std::string& name = frame.function.rfind("__device_stub_", 0) == 0 ? frame.function : frame.text;
      const std::string mangled = name.substr(std::string("__device_stub_").size());
      stub_kernel = demangle(mangled.substr(0, mangled.find('(')));
      continue;
    }
    if (!stub_kernel.empty() && frame.function == stub_kernel) {
      stub_kernel.clear();
      continue;
    }
    stub_kernel.clear();
    // The toolkit's inline wrappers, compiled into the program: the
    // cudaLaunchKernel<T> and cudaMalloc<T> templates of cuda_runtime.h and
    // nvcc's __cudaLaunchKernel_helper (crt/device_functions.h). Found by
    // the recommendations e2e test, whose launches and allocations were
    // attributed to those headers instead of the program's own lines.
    if (is_toolkit_inline_wrapper(frame.function, frame.file)) continue;
    return site_of(frame);
  }
  if (outermost_library_frame != nullptr) return site_of(*outermost_library_frame);
  return innermost_first.empty() ? CallSite{} : site_of(innermost_first.front());
}

std::string python_package(std::string_view file) {
  for (std::string_view packages : {"/site-packages/", "/dist-packages/"}) {
    const size_t at = file.rfind(packages);
    if (at == std::string_view::npos) continue;
    std::string_view rest = file.substr(at + packages.size());
    rest = rest.substr(0, rest.find('/'));
    if (rest.size() > 3 && rest.substr(rest.size() - 3) == ".py") rest.remove_suffix(3);
    if (!rest.empty()) return std::string(rest);
  }
  const size_t slash = file.rfind('/');
  return std::string(slash == std::string_view::npos || slash == 0 ? file : file.substr(0, slash));
}

}  // namespace proflaunch::tools
