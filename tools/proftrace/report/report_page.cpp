#include "tools/proftrace/report/report_page.h"

#include "tools/proftrace/html_text.h"
#include "tools/proftrace/json_writer.h"

namespace proflaunch::tools::report::assets {
extern const char kReportPageHtml[];
extern const char kReportPageCss[];
extern const char kReportPageJs[];
}  // namespace proflaunch::tools::report::assets

namespace proflaunch::tools::memory::assets {
extern const char kMemoryPageCss[];
extern const char kMemoryPageJs[];
}  // namespace proflaunch::tools::memory::assets

namespace proflaunch::tools::report {

namespace {

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json_quoted(items[i]);
  return out + "]";
}

}  // namespace

std::string report_json(const ReportData& data, bool with_memory) {
  std::string json = "{\"title\": " + json_quoted(data.title) + ", \"version\": " + json_quoted(PROFLAUNCH_VERSION) +
                     ", \"inputs\": " + quoted_list(data.inputs) + ", \"notes\": " + quoted_list(data.notes) +
                     ",\n\"stats\": " + stats::tables_json(data.tables) +
                     ",\n\"memory\": " + (data.memory_json.empty() || !with_memory ? std::string("null") : data.memory_json) +
                     (data.cpu_json.empty() ? std::string() : ",\n\"cpu\": " + data.cpu_json) + "}\n";
  return json;
}

bool write_report_page(const ReportData& data, std::FILE* out) {
  const std::string title = html_escaped(data.title);
  const std::string report = script_safe(report_json(data, /*with_memory=*/false));
  const std::string memory = script_safe(data.memory_json.empty() ? "null" : data.memory_json);
  const std::string page = fill_template(assets::kReportPageHtml, {{"MEMORY_STYLE", memory::assets::kMemoryPageCss},
                                                                  {"STYLE", assets::kReportPageCss},
                                                                  {"MEMORY_SCRIPT", memory::assets::kMemoryPageJs},
                                                                  {"SCRIPT", assets::kReportPageJs},
                                                                  {"TITLE", title},
                                                                  {"VERSION", PROFLAUNCH_VERSION},
                                                                  {"DATA", report},
                                                                  {"MEMORY_DATA", memory}});
  return std::fwrite(page.data(), 1, page.size(), out) == page.size();
}

}  // namespace proflaunch::tools::report
