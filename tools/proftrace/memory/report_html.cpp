// `proftrace memory -o memory.html`: one self-contained page. The template,
// its CSS and its script (page/) are embedded at build time; the report goes
// in as the same JSON `--json` writes. Nothing is fetched when the page is
// opened: no CDN, no fonts, no network.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/proftrace/html_text.h"
#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/memory/report_json.h"
#include "tools/proftrace/memory/report_writers.h"

namespace proflaunch::tools::memory::assets {
extern const char kMemoryPageHtml[];
extern const char kMemoryPageCss[];
extern const char kMemoryPageJs[];
}  // namespace proflaunch::tools::memory::assets

namespace proflaunch::tools::memory {

bool report_as_json(const MemoryReport& report, const std::string& title, std::string* json) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* memory = open_memstream(&buffer, &size);
  if (memory == nullptr) return false;
  bool ok;
  {
    JsonWriter writer(memory);
    write_report_json(report, title, writer);
    ok = writer.flush();
  }
  ok = std::fclose(memory) == 0 && ok;
  if (ok) json->assign(buffer, size);
  std::free(buffer);
  return ok;
}

bool write_html_report(const MemoryReport& report, const std::string& title, std::FILE* out) {
  std::string json;
  if (!report_as_json(report, title, &json)) return false;
  std::string page = assets::kMemoryPageHtml;
  // The data last: nothing inside it is taken for a placeholder.
  replace_all(page, "@STYLE@", assets::kMemoryPageCss);
  replace_all(page, "@SCRIPT@", assets::kMemoryPageJs);
  replace_all(page, "@TITLE@", html_escaped(title));
  replace_all(page, "@VERSION@", PROFLAUNCH_VERSION);
  const size_t data_at = page.find("@DATA@");
  if (data_at == std::string::npos) return false;
  page.replace(data_at, 6, script_safe(json));
  return std::fwrite(page.data(), 1, page.size(), out) == page.size();
}

}  // namespace proflaunch::tools::memory
