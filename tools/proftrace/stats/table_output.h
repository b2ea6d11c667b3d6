// Renders stats tables: aligned text for people, CSV for scripts.
#pragma once

#include <cstdio>

#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

void print_text(const Table& table, std::FILE* out);
void print_csv(const Table& table, std::FILE* out);

}  // namespace proflaunch::tools::stats
