// How the memory outputs write sizes, counts and times for people.
#pragma once

#include <cstdint>
#include <string>

namespace proflaunch::tools::memory {

// "512 B", "1.5 KiB", "77.1 GiB": binary units, one decimal from KiB on.
std::string human_bytes(uint64_t bytes);

// "1,204"
std::string grouped(uint64_t count);

// Seconds since `base_ns`, with `decimals` decimals: "12.345 s".
std::string seconds_since(uint64_t ns, uint64_t base_ns, int decimals = 3);

// A duration: "850 ns", "12.3 us", "4.5 ms", "3.2 s".
std::string human_duration(uint64_t ns);

}  // namespace proflaunch::tools::memory
