// Renders stats tables: aligned text for people, CSV and JSON for scripts.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

void print_text(const Table& table, std::FILE* out);
void print_csv(const Table& table, std::FILE* out);

// {"tables": [{"section", "title", "columns", "rows": [{column: cell, ...,
// "stack": [frames]}], "notes"}]}: a cell that is a number is a JSON number.
struct NamedTable {
  std::string section;
  Table table;
};
void print_json(const std::vector<NamedTable>& tables, std::FILE* out);

}  // namespace proflaunch::tools::stats
