#include "launcher/settings_cli.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "preload/config.h"

namespace proflaunch::launcher {
namespace {

size_t index(Setting setting) { return static_cast<size_t>(setting); }

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at = text.find(separator); at != std::string::npos; at = text.find(separator, start)) {
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

// The row's help line as --help and the README show it.
std::string help_line(const SettingRow& row) {
  std::string help = row.help;
  if (row.needs != kNoSetting) help += "; needs " + option_name(setting_row(row.needs));
  return help;
}

std::string range_text(const SettingRow& row) { return std::to_string(row.min) + ".." + std::to_string(row.max); }

// Text in a Markdown table cell: '|' would end the cell, '<' start HTML.
std::string markdown_text(const std::string& text) {
  std::string cell;
  for (char c : text) {
    if (c == '|') cell += "\\|";
    else if (c == '<') cell += "&lt;";
    else cell += c;
  }
  return cell;
}

// Code in a Markdown table cell (entities are not decoded there).
std::string markdown_code(const char* text) {
  if (text == nullptr || *text == '\0') return "";
  std::string cell = "`";
  for (const char* c = text; *c != '\0'; ++c) cell += *c == '|' ? std::string("\\|") : std::string(1, *c);
  return cell + "`";
}

std::string option_spelling(const SettingRow& row) {
  std::string spelling;
  for (const std::string& flag : split(row.flags, ',')) spelling += (spelling.empty() ? "" : ", ") + flag;
  if (row.value != SettingValue::kFlag) spelling += std::string("=") + row.syntax;
  return spelling;
}

std::string meaning(const SettingRow& row) {
  std::string text = help_line(row);
  if (row.value == SettingValue::kNumber) text += " (" + range_text(row) + ")";
  return text;
}

std::string options_markdown() {
  std::string table = "| option | default | meaning |\n|---|---|---|\n";
  for (const SettingRow& row : kSettingRows) {
    if (row.flags == nullptr) continue;
    table += "| " + markdown_code(option_spelling(row).c_str()) + " | " + markdown_code(row.default_text) + " | " +
             markdown_text(meaning(row)) + " |\n";
  }
  return table;
}

std::string variables_markdown() {
  std::string table = "| variable | option | default | meaning |\n|---|---|---|---|\n";
  for (const SettingRow& row : kSettingRows) {
    if (row.env == nullptr) continue;
    table += "| " + markdown_code(row.env) + " | " +
             (row.flags != nullptr ? markdown_code(option_name(row).c_str()) : "—") + " | " +
             markdown_code(row.default_text) + " | " + markdown_text(meaning(row)) + " |\n";
  }
  return table;
}

}  // namespace

std::string option_name(const SettingRow& row) {
  const std::string flags = row.flags;
  const size_t at = flags.find("--");
  return at == std::string::npos ? flags : flags.substr(at, flags.find(',', at) - at);
}

std::string SettingValues::text(Setting setting) const {
  if (given(setting)) return text_[index(setting)];
  const char* fallback = setting_row(setting).default_text;
  return fallback != nullptr ? fallback : "";
}

unsigned SettingValues::number(Setting setting) const {
  return static_cast<unsigned>(std::strtoul(text(setting).c_str(), nullptr, 10));
}

void SettingValues::set(Setting setting, std::string text) {
  text_[index(setting)] = std::move(text);
  given_[index(setting)] = true;
}

void SettingOptions::add_to(CLI::App& app) {
  std::map<const SettingGroup*, CLI::Option_group*> groups;
  for (const SettingRow& row : kSettingRows) {
    if (row.flags == nullptr) continue;
    const size_t i = index(row.id);
    CLI::App* owner = &app;
    if (row.group != nullptr) {
      CLI::Option_group*& group = groups[row.group];
      if (group == nullptr) group = app.add_option_group(row.group->name, row.group->description);
      owner = group;
    }
    const std::string help = help_line(row);
    CLI::Option* option = nullptr;
    switch (row.value) {
      case SettingValue::kFlag:
        option = owner->add_flag(row.flags, flag_[i], help);
        break;
      case SettingValue::kNumber:
        // CLI11 converts the number (its messages for a bad one).
        option = owner->add_option(row.flags, number_[i], help)
                     ->check(CLI::Range(row.min, row.max).description(range_text(row)))
                     ->type_name(row.syntax);
        break;
      case SettingValue::kChoice:
        option = owner->add_option(row.flags, text_[i], help)->check(CLI::IsMember(split(row.syntax, '|')));
        break;
      case SettingValue::kText:
        option = owner->add_option(row.flags, text_[i], help)->type_name(row.syntax);
        if (row.check != nullptr)
          option->check([check = row.check](const std::string& text) -> std::string {
            char problem[512];
            return check(text.c_str(), problem, sizeof problem) ? std::string() : std::string(problem);
          });
        break;
    }
    if (row.default_text != nullptr) option->default_str(row.default_text);
    option_[i] = option;
  }
}

SettingValues SettingOptions::values() const {
  SettingValues values;
  for (const SettingRow& row : kSettingRows) {
    const size_t i = index(row.id);
    if (option_[i] == nullptr || option_[i]->count() == 0) continue;
    switch (row.value) {
      case SettingValue::kFlag:
        if (flag_[i]) values.set(row.id, "1");
        break;
      case SettingValue::kNumber:
        values.set(row.id, std::to_string(number_[i]));
        break;
      case SettingValue::kChoice:
      case SettingValue::kText:
        values.set(row.id, text_[i]);
        break;
    }
  }
  return values;
}

Environment settings_environment(const SettingValues& values) {
  Environment environment;
  for (const SettingRow& row : kSettingRows)
    if (row.flags != nullptr && row.env != nullptr && values.given(row.id))
      environment.emplace_back(row.env, values.text(row.id));
  return environment;
}

std::vector<std::string> settings_to_unset(const Environment& environment) {
  std::vector<std::string> unset;
  for (const SettingRow& row : kSettingRows) {
    if (row.env == nullptr) continue;
    const bool set = std::any_of(environment.begin(), environment.end(),
                                 [&](const auto& variable) { return variable.first == row.env; });
    if (!set) unset.push_back(row.env);
  }
  return unset;
}

std::string shim_refusal(const Environment& environment) {
  struct Refusal {
    const Environment* environment;
    std::string message;
  } refusal{&environment, {}};
  Config config;
  parse_config(
      config,
      [](const char* name, void* context) -> const char* {
        for (const auto& [variable, value] : *static_cast<Refusal*>(context)->environment)
          if (variable == name) return value.c_str();
        return nullptr;
      },
      &refusal,
      [](const char* variable, const char* value, const char* problem, void* context) {
        std::string& message = static_cast<Refusal*>(context)->message;
        if (!message.empty()) return;
        // The capture options are checked together; the problem names the option.
        if (std::string(variable) == kEnvCaptureOptions) {
          message = value;
          return;
        }
        message = std::string(variable) + "='" + value + "': " + problem;
        for (const SettingRow& row : kSettingRows)
          if (row.env != nullptr && row.flags != nullptr && std::string(variable) == row.env)
            message = option_name(row) + " '" + value + "': " + problem;
      },
      &refusal);
  return refusal.message;
}

std::string settings_markdown(const std::string& table) {
  if (table == "options") return options_markdown();
  if (table == "variables") return variables_markdown();
  return "";
}

}  // namespace proflaunch::launcher
