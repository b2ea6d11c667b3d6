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
  for (size_t r = 0; r < table.rows.size(); ++r) {
    print_row(table.rows[r]);
    if (table.show_stacks && r < table.stacks.size()) {
      for (const std::string& frame : table.stacks[r]) std::fprintf(out, "      %s\n", frame.c_str());
      std::fprintf(out, "\n");
    }
  }
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

std::string joined_stack(const std::vector<std::string>& frames) {
  std::string text;
  for (const std::string& frame : frames) text += (text.empty() ? "" : " > ") + frame;
  return text;
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(const std::string& cell) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < cell.size() && cell[i] >= '0' && cell[i] <= '9') ++i;
    return i > start;
  };
  if (i < cell.size() && cell[i] == '-') ++i;
  if (i < cell.size() && cell[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < cell.size() && cell[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < cell.size() && (cell[i] == 'e' || cell[i] == 'E')) {
    ++i;
    if (i < cell.size() && (cell[i] == '+' || cell[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == cell.size();
}

}  // namespace

void print_csv(const Table& table, std::FILE* out) {
  std::fprintf(out, "# %s\n", table.title.c_str());
  auto print_row = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c)
      std::fprintf(out, "%s%s", c ? "," : "", csv_cell(cells[c]).c_str());
    std::fprintf(out, "\n");
  };
  const bool stacks = !table.stacks.empty();
  std::vector<std::string> columns = table.columns;
  if (stacks) columns.push_back("Stack (root > leaf)");
  print_row(columns);
  for (size_t r = 0; r < table.rows.size(); ++r) {
    std::vector<std::string> cells = table.rows[r];
    if (stacks) cells.push_back(joined_stack(r < table.stacks.size() ? table.stacks[r] : std::vector<std::string>{}));
    print_row(cells);
  }
  std::fprintf(out, "\n");
}

namespace {

std::string json_list(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + json_quoted(items[i]);
  return text + "]";
}

}  // namespace

// A column whose cells are all numbers (or "-") has JSON numbers, and null
// for "-"; every other cell is a string, so a column has one JSON type.
std::string tables_json(const std::vector<NamedTable>& tables) {
  std::string text = "{\"tables\": [";
  for (size_t t = 0; t < tables.size(); ++t) {
    const Table& table = tables[t].table;
    std::vector<bool> numeric(table.columns.size(), true);
    for (const auto& row : table.rows)
      for (size_t c = 0; c < row.size() && c < numeric.size(); ++c)
        numeric[c] = numeric[c] && (row[c] == "-" || is_json_number(row[c]));
    text += t ? ",\n  {" : "\n  {";
    text += "\"section\": " + json_quoted(tables[t].section) + ", \"title\": " + json_quoted(table.title);
    text += ", \"columns\": " + json_list(table.columns) + ",\n   \"rows\": [";
    for (size_t r = 0; r < table.rows.size(); ++r) {
      text += r ? ",\n    {" : "\n    {";
      const auto& row = table.rows[r];
      for (size_t c = 0; c < row.size() && c < table.columns.size(); ++c) {
        text += (c ? ", " : "") + json_quoted(table.columns[c]) + ": ";
        text += numeric[c] ? (row[c] == "-" ? std::string("null") : row[c]) : json_quoted(row[c]);
      }
      if (r < table.stacks.size()) text += ", \"stack\": " + json_list(table.stacks[r]);
      text += "}";
    }
    text += "],\n   \"notes\": " + json_list(table.notes) + "}";
  }
  text += "\n]}\n";
  return text;
}

void print_json(const std::vector<NamedTable>& tables, std::FILE* out) { std::fputs(tables_json(tables).c_str(), out); }

}  // namespace proflaunch::tools::stats
