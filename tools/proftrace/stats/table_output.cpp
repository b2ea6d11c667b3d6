#include "tools/proftrace/stats/table_output.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>

#include "tools/proftrace/json_writer.h"

namespace proflaunch::tools::stats {

std::string format_ns(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%" PRIu64, ns);
  return text;
}

std::string format_percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", fraction * 100.0);
  return text;
}

void print_text(const Table& table, std::FILE* out) {
  std::vector<size_t> widths(table.columns.size(), 0);
  for (size_t c = 0; c < table.columns.size(); ++c) widths[c] = table.columns[c].size();
  for (const auto& row : table.rows)
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  // A column is numeric when every cell is a number (or empty).
  std::vector<bool> numeric(table.columns.size(), true);
  for (const auto& row : table.rows)
    for (size_t c = 0; c < row.size() && c < numeric.size(); ++c)
      numeric[c] = numeric[c] && row[c].find_first_not_of("0123456789.-+e") == std::string::npos;
  std::fprintf(out, "%s\n\n", table.title.c_str());
  auto print_row = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size() && c < widths.size(); ++c) {
      const bool last = c + 1 == cells.size();
      // Numbers right-aligned, text left-aligned; the last column unpadded.
      if (last)
        std::fprintf(out, "%s", cells[c].c_str());
      else if (numeric[c])
        std::fprintf(out, "%*s  ", static_cast<int>(widths[c]), cells[c].c_str());
      else
        std::fprintf(out, "%-*s  ", static_cast<int>(widths[c]), cells[c].c_str());
    }
    std::fprintf(out, "\n");
  };
  print_row(table.columns);
  std::vector<std::string> rule;
  for (size_t c = 0; c < widths.size(); ++c)  // the last column (names) is not padded: rule its title
    rule.push_back(std::string(c + 1 == widths.size() ? table.columns[c].size() : widths[c], '-'));
  print_row(rule);
  for (const auto& row : table.rows) print_row(row);
  for (const auto& note : table.notes) std::fprintf(out, "  %s\n", note.c_str());
  std::fprintf(out, "\n");
}

namespace {

std::string csv_cell(const std::string& cell) {
  if (cell.find_first_of(",\"\n") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

void print_csv(const Table& table, std::FILE* out) {
  std::fprintf(out, "# %s\n", table.title.c_str());
  auto print_row = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c)
      std::fprintf(out, "%s%s", c ? "," : "", csv_cell(cells[c]).c_str());
    std::fprintf(out, "\n");
  };
  print_row(table.columns);
  for (const auto& row : table.rows) print_row(row);
  std::fprintf(out, "\n");
}

namespace {

// The JSON number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?, what format_ns,
// format_percent and the counts write.
bool is_json_number(const std::string& cell) {
  size_t i = cell.size() > 0 && cell[0] == '-' ? 1 : 0;
  const size_t digits = i;
  while (i < cell.size() && std::isdigit(static_cast<unsigned char>(cell[i]))) ++i;
  if (i == digits || (cell[digits] == '0' && i - digits > 1)) return false;
  if (i == cell.size()) return true;
  if (cell[i] != '.' || i + 1 == cell.size()) return false;
  for (++i; i < cell.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(cell[i]))) return false;
  return true;
}

std::string json_list(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + json_quoted(items[i]);
  return text + "]";
}

}  // namespace

void print_json(const std::vector<NamedTable>& tables, std::FILE* out) {
  std::fprintf(out, "{\"tables\": [");
  for (size_t t = 0; t < tables.size(); ++t) {
    const Table& table = tables[t].table;
    std::vector<bool> numeric(table.columns.size(), true);
    for (const auto& row : table.rows)
      for (size_t c = 0; c < row.size() && c < numeric.size(); ++c)
        numeric[c] = numeric[c] && (row[c] == "-" || is_json_number(row[c]));
    std::fprintf(out, "%s\n {\"section\": %s, \"title\": %s,\n  \"columns\": %s,\n  \"rows\": [", t ? "," : "",
                 json_quoted(tables[t].section).c_str(), json_quoted(table.title).c_str(),
                 json_list(table.columns).c_str());
    for (size_t r = 0; r < table.rows.size(); ++r) {
      const auto& row = table.rows[r];
      std::string text = "[";
      for (size_t c = 0; c < row.size(); ++c) {
        if (c) text += ", ";
        if (c < numeric.size() && numeric[c]) text += row[c] == "-" ? "null" : row[c];
        else text += json_quoted(row[c]);
      }
      std::fprintf(out, "%s\n   %s]", r ? "," : "", text.c_str());
    }
    std::fprintf(out, "],\n  \"notes\": %s}", json_list(table.notes).c_str());
  }
  std::fprintf(out, "\n]}\n");
}

}  // namespace proflaunch::tools::stats
