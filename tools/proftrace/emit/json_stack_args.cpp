#include "tools/proftrace/emit/json_stack_args.h"

#include "tools/proftrace/json_writer.h"

namespace proflaunch::tools::emit {

const std::string& StackArgs::json(const SectionModel& section, uint16_t api, timeline::CallStackRef stack) {
  const auto key = std::make_tuple(section.section_id, stack.native, stack.python, api);
  auto found = cache_.find(key);
  if (found != cache_.end()) return found->second;
  const std::string text = formatter_.text(section, stack.native, stack.python,
                                     api == timeline::kNoLeafApi ? std::string() : section.api_name(api));
  return cache_.emplace(key, text.empty() ? std::string() : json_quoted(text)).first->second;
}

}  // namespace proflaunch::tools::emit
