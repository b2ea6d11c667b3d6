#include "tools/proftrace/stats/cpu_profile.h"

#include <algorithm>

#include "tools/proftrace/interpret/blocking_calls.h"

namespace proflaunch::tools::stats {

namespace {

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string function_key(const StackFormatter::CallSite& site) {
  if (site.python) return (site.function.empty() ? "?" : site.function) + " (" + base_name(site.file) + ")";
  return site.function.empty() ? site.text : site.function;
}

std::string module_key(const StackFormatter::CallSite& site) {
  if (!site.module.empty()) return site.module;
  return site.python ? base_name(site.file) : "(unknown module)";
}

// Python's own library and installed packages: not the program's lines.
bool library_file(const std::string& file) {
  return file.find("/lib/python3") != std::string::npos || file.find("/site-packages/") != std::string::npos ||
         file.find("/dist-packages/") != std::string::npos || file.rfind("<frozen", 0) == 0;
}

}  // namespace

std::string activity_site(const std::vector<StackFormatter::CallSite>& root_first) {
  // The innermost frame of the program's own Python code, and the Python
  // function it called (Queue.get, json.loads), when there is one.
  const StackFormatter::CallSite* user = nullptr;
  const StackFormatter::CallSite* called = nullptr;
  const StackFormatter::CallSite* innermost_python = nullptr;
  for (const auto& site : root_first) {
    if (!site.python || site.text == "...") continue;
    innermost_python = &site;
    if (!library_file(site.file)) {
      user = &site;
      called = nullptr;
    } else if (user != nullptr && called == nullptr) {
      called = &site;
    }
  }
  auto function_of = [](const StackFormatter::CallSite& site) {
    return site.function.empty() ? std::string("?") : site.function;
  };
  if (user != nullptr)
    return function_of(called != nullptr ? *called : *user) + " at " + base_name(user->file) + ":" +
           std::to_string(user->line);
  if (innermost_python != nullptr)
    return function_of(*innermost_python) + " at " + base_name(innermost_python->file) + ":" +
           std::to_string(innermost_python->line);
  for (auto it = root_first.rbegin(); it != root_first.rend(); ++it)
    if (it->text != "...") return it->text;
  return "";
}

namespace {

void add_distinct(std::vector<std::string>& list, std::string key) {
  if (std::find(list.begin(), list.end(), key) == list.end()) list.push_back(std::move(key));
}

}  // namespace

const ProfileBuilder::Keys& ProfileBuilder::keys(uint64_t section_id, uint32_t native, uint32_t python) {
  const auto key = std::make_tuple(section_id, native, python);
  auto found = cache_.find(key);
  if (found != cache_.end()) return found->second;
  Keys k;
  if (const SectionModel* section = model_.find(section_id)) {
    const std::vector<StackFormatter::CallSite> sites = formatter_.sites(*section, native, python);
    for (const auto& site : sites) {
      if (site.text == "...") continue;
      add_distinct(k.functions, function_key(site));
      add_distinct(k.modules, module_key(site));
      if (site.python) add_distinct(k.lines, site.text);
    }
    for (auto it = sites.rbegin(); it != sites.rend(); ++it) {
      if (it->text == "...") continue;
      if (k.self_function.empty()) {
        k.self_function = function_key(*it);
        k.self_module = module_key(*it);
      }
      if (it->python && k.self_line.empty()) k.self_line = it->text;
    }
    k.site = activity_site(sites);
  }
  if (k.self_function.empty()) k.self_function = k.self_module = "(no stack)";
  return cache_.emplace(key, std::move(k)).first->second;
}

void ProfileBuilder::add_sample(ThreadProfile& profile, const CpuActivity::Sample& sample) {
  const Keys& k = keys(sample.section, sample.native, sample.python);
  const uint64_t n = sample.periods;  // the periods of CPU time it stands for
  profile.samples += n;
  profile.functions[k.self_function].self += n;
  profile.modules[k.self_module].self += n;
  if (!k.self_line.empty()) profile.lines[k.self_line].self += n;
  for (const auto& f : k.functions) profile.functions[f].total += n;
  for (const auto& m : k.modules) profile.modules[m].total += n;
  for (const auto& l : k.lines) profile.lines[l].total += n;
  if (k.functions.empty()) profile.functions[k.self_function].total += n, profile.modules[k.self_module].total += n;
}

std::string ProfileBuilder::sample_site(const CpuActivity::Sample& sample) {
  return keys(sample.section, sample.native, sample.python).site;
}

std::string ProfileBuilder::wait_site(const CpuActivity::Wait& wait) {
  const auto key = std::make_tuple(wait.section, wait.native, wait.python, wait.api, wait.object_kind);
  auto found = wait_sites_.find(key);
  if (found != wait_sites_.end()) return found->second;
  const SectionModel* section = model_.find(wait.section);
  format::BlockingCallRecord record{};
  record.span.api = wait.api;
  record.object_kind = wait.object_kind;
  std::string text = interpret::blocking_call_name(section, record);
  if (wait.object_kind != static_cast<uint8_t>(format::WaitObjectKind::kNone))
    text += " (" + interpret::wait_object_kind_name(wait.object_kind) + ")";
  if (section != nullptr) {
    const std::string site = activity_site(formatter_.sites(*section, wait.native, wait.python));
    if (!site.empty()) text += " in " + site;
  }
  return wait_sites_.emplace(key, text).first->second;
}

void ProfileBuilder::add_wait(ThreadProfile& profile, const CpuActivity::Wait& wait, uint64_t ns) {
  WaitSite& site = profile.waits[wait_site(wait)];
  ++site.calls;
  site.ns += ns;
  site.max_ns = std::max(site.max_ns, ns);
  profile.blocked_ns += ns;
}

}  // namespace proflaunch::tools::stats
