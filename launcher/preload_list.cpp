#include "launcher/preload_list.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <initializer_list>

namespace proflaunch::launcher {
namespace {

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> entries;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = list.find_first_of(": ", start);
    const std::string entry = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!entry.empty()) entries.push_back(entry);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return entries;
}

bool is_executable_file(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

bool has_prefix(const std::string& name, std::initializer_list<const char*> prefixes) {
  for (const char* prefix : prefixes)
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

// ThreadSanitizer's runtime, GNU and LLVM names.
bool is_tsan_runtime(const std::string& library) {
  return has_prefix(base_name(library), {"libtsan.so", "libclang_rt.tsan"});
}

}  // namespace

bool is_first_only_runtime(const std::string& library) {
  return is_tsan_runtime(library) ||
         has_prefix(base_name(library),
                    {"libasan.so", "libhwasan.so", "libclang_rt.asan", "libclang_rt.hwasan"});
}

std::vector<std::string> needed_libraries(const std::string& elf_path) {
  std::vector<std::string> needed;
  const int fd = open(elf_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return needed;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf != nullptr && elf_kind(elf) == ELF_K_ELF) {
    for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr; section = elf_nextscn(elf, section)) {
      GElf_Shdr header;
      if (gelf_getshdr(section, &header) == nullptr || header.sh_type != SHT_DYNAMIC) continue;
      Elf_Data* data = elf_getdata(section, nullptr);
      if (data == nullptr || header.sh_entsize == 0) continue;
      const size_t count = header.sh_size / header.sh_entsize;
      for (size_t i = 0; i < count; ++i) {
        GElf_Dyn entry;
        if (gelf_getdyn(data, static_cast<int>(i), &entry) == nullptr) break;
        if (entry.d_tag == DT_NULL) break;
        if (entry.d_tag != DT_NEEDED) continue;
        const char* name = elf_strptr(elf, header.sh_link, entry.d_un.d_val);
        if (name != nullptr) needed.emplace_back(name);
      }
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return needed;
}

std::string resolve_program(const std::string& program, const std::string& path_variable) {
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) return program;
  // execvp's default search path when PATH is unset.
  const std::string search = path_variable.empty() ? "/bin:/usr/bin" : path_variable;
  size_t start = 0;
  while (start <= search.size()) {
    const size_t end = search.find(':', start);
    std::string dir = search.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    if (is_executable_file(candidate)) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

std::vector<std::string> first_only_runtimes(const std::string& shim_path, const std::string& program_path) {
  std::vector<std::string> runtimes;
  for (const std::string& file : {shim_path, program_path}) {
    if (file.empty()) continue;
    for (const std::string& library : needed_libraries(file))
      if (is_first_only_runtime(library) &&
          std::find(runtimes.begin(), runtimes.end(), library) == runtimes.end())
        runtimes.push_back(library);
  }
  return runtimes;
}

std::string preload_value(const std::string& shim, const std::string& users_list,
                          const std::vector<std::string>& runtimes) {
  const std::vector<std::string> users = split_list(users_list);
  if (std::find(users.begin(), users.end(), shim) != users.end()) return users_list;
  std::vector<std::string> first;
  std::vector<std::string> rest;
  for (const std::string& entry : users) (is_first_only_runtime(entry) ? first : rest).push_back(entry);
  for (const std::string& runtime : runtimes) {
    const bool named = std::any_of(first.begin(), first.end(),
                                   [&](const std::string& entry) { return base_name(entry) == base_name(runtime); });
    if (!named) first.push_back(runtime);
  }
  std::string value;
  for (const std::string& entry : first) value += entry + ":";
  value += shim;
  for (const std::string& entry : rest) value += ":" + entry;
  return value;
}

std::string tsan_options_value(const char* users_options, const std::vector<std::string>& runtimes) {
  if (std::none_of(runtimes.begin(), runtimes.end(), is_tsan_runtime)) return "";
  const std::string users = users_options != nullptr ? users_options : "";
  if (users.find("die_after_fork") != std::string::npos) return "";
  return users.empty() ? "die_after_fork=0" : users + ":die_after_fork=0";
}

}  // namespace proflaunch::launcher
