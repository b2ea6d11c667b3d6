#include "launcher/gpu_metrics/rocm_smi_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <type_traits>

namespace proflaunch::launcher::gpu_metrics {
namespace {

// What `call` writes to stderr, instead of the terminal. The real library
// prints its exceptions there when it fails to start (Debian's 5.2.3 on a
// machine without the amdgpu driver: "Failed to open drm root directory
// /sys/class/drm ... Exception caught: rsmi_init."), which an NVIDIA user
// with ROCm SMI installed must not see on every run. The launcher's other
// threads do not write to stderr while the sampler starts.
template <typename Call>
std::string capturing_stderr(Call call) {
  std::FILE* sink = std::tmpfile();
  const int saved = sink != nullptr ? dup(STDERR_FILENO) : -1;
  if (saved < 0) {
    if (sink != nullptr) std::fclose(sink);
    call();
    return "";
  }
  std::fflush(stderr);
  dup2(fileno(sink), STDERR_FILENO);
  call();
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string text;
  std::rewind(sink);
  char buffer[512];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, sink)) > 0 && text.size() < 4096) text.append(buffer, got);
  std::fclose(sink);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

}  // namespace

bool RocmSmiLibrary::open(std::string* why) {
  handle = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    *why = error != nullptr ? error : "librocm_smi64.so.1 not found";
    return false;
  }
  // An entry point that is missing stays null: its metrics are then left
  // out as unsupported.
  auto resolve = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
  };
  resolve(init, "rsmi_init");
  resolve(shut_down, "rsmi_shut_down");
  resolve(status_string, "rsmi_status_string");
  resolve(num_monitor_devices, "rsmi_num_monitor_devices");
  resolve(dev_name_get, "rsmi_dev_name_get");
  resolve(dev_unique_id_get, "rsmi_dev_unique_id_get");
  resolve(dev_pci_id_get, "rsmi_dev_pci_id_get");
  resolve(dev_busy_percent_get, "rsmi_dev_busy_percent_get");
  resolve(dev_memory_busy_percent_get, "rsmi_dev_memory_busy_percent_get");
  resolve(dev_memory_total_get, "rsmi_dev_memory_total_get");
  resolve(dev_memory_usage_get, "rsmi_dev_memory_usage_get");
  resolve(dev_gpu_clk_freq_get, "rsmi_dev_gpu_clk_freq_get");
  resolve(dev_power_ave_get, "rsmi_dev_power_ave_get");
  resolve(dev_power_cap_get, "rsmi_dev_power_cap_get");
  resolve(dev_temp_metric_get, "rsmi_dev_temp_metric_get");
  resolve(dev_pci_bandwidth_get, "rsmi_dev_pci_bandwidth_get");
  resolve(dev_ecc_count_get, "rsmi_dev_ecc_count_get");
  resolve(dev_gpu_metrics_info_get, "rsmi_dev_gpu_metrics_info_get");
  if (init == nullptr || num_monitor_devices == nullptr) {
    *why = "librocm_smi64.so.1 lacks rsmi_init";
    close();
    return false;
  }
  rsmi::Status result = rsmi::kSuccess;
  const std::string printed = capturing_stderr([&] { result = init(0); });
  if (result != rsmi::kSuccess) {
    *why = "rsmi_init failed: " + error_text(result) + (printed.empty() ? "" : " (" + printed + ")");
    shut_down = nullptr;
    close();
    return false;
  }
  return true;
}

void RocmSmiLibrary::close() {
  if (handle == nullptr) return;
  if (shut_down != nullptr) shut_down();
  dlclose(handle);
  *this = RocmSmiLibrary{};
}

std::string RocmSmiLibrary::error_text(rsmi::Status result) const {
  const char* text = nullptr;
  if (status_string == nullptr || status_string(result, &text) != rsmi::kSuccess || text == nullptr)
    return "ROCm SMI error " + std::to_string(result);
  return text;
}

}  // namespace proflaunch::launcher::gpu_metrics
