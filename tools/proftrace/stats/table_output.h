// Renders stats tables: aligned text for people, CSV and JSON for scripts.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

void print_text(const Table& table, std::FILE* out);
void print_csv(const Table& table, std::FILE* out);

// Every table of one run as one JSON document:
// {"tables": [{"section", "title", "columns", "rows": [{column: cell, ...,
// "stack": [frames]}], "notes"}, ...]}. A column whose cells are all numbers
// (or "-") has JSON numbers (and null for "-"), every other cell is a string.
struct NamedTable {
  std::string section;  // the --section name
  Table table;
};
void print_json(const std::vector<NamedTable>& tables, std::FILE* out);
// The same document as a string (the report page embeds it).
std::string tables_json(const std::vector<NamedTable>& tables);

}  // namespace proflaunch::tools::stats
