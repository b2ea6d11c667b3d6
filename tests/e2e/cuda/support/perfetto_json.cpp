#include "tests/e2e/cuda/support/perfetto_json.h"

#include <fstream>
#include <sstream>

namespace proflaunch::e2e {

std::vector<const JsonValue*> PerfettoJson::slices(const std::string& category_prefix) const {
  std::vector<const JsonValue*> found;
  for (const JsonValue* event : events) {
    if ((*event)["ph"].str() != "X") continue;
    if ((*event)["cat"].str().rfind(category_prefix, 0) != 0) continue;
    found.push_back(event);
  }
  return found;
}

bool load_perfetto_json(const std::string& path, PerfettoJson* json, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open " + path;
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto document = testing::parse_json(text.str(), error);
  if (!document) return false;
  json->document = std::move(*document);
  const JsonValue* events = json->document.is_object() ? json->document.find("traceEvents")
                                                       : &json->document;
  if (events == nullptr || events->type != JsonValue::Type::kArray) {
    *error = path + ": no traceEvents array";
    return false;
  }
  for (const JsonValue& event : events->items) {
    json->events.push_back(&event);
    if (event["ph"].str() != "M") continue;
    const auto pid = static_cast<uint32_t>(event["pid"].as_uint());
    if (event["name"].str() == "process_name") json->process_names[pid] = event["args"]["name"].str();
    if (event["name"].str() == "thread_name")
      json->thread_names[{pid, static_cast<uint32_t>(event["tid"].as_uint())}] = event["args"]["name"].str();
  }
  return true;
}

}  // namespace proflaunch::e2e
