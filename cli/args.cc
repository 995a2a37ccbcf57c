#include "cli/args.h"

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace nmsparse::cli {
namespace {

const OptionSpec* FindLong(const std::vector<OptionSpec>& options, const std::string& name) {
  for (const OptionSpec& o : options) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

const OptionSpec* FindShort(const std::vector<OptionSpec>& options, char name) {
  for (const OptionSpec& o : options) {
    if (o.short_name != 0 && o.short_name == name) return &o;
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> ParsedArgs::Get(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ParsedArgs::GetAll(const std::string& name) const {
  auto it = options.find(name);
  return it == options.end() ? std::vector<std::string>{} : it->second;
}

absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::vector<OptionSpec>& options) {
  ParsedArgs parsed;
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    const bool is_option = !options_ended && word.size() > 1 && word[0] == '-' &&
                           !(word.size() > 1 && (std::isdigit(static_cast<unsigned char>(word[1])) != 0));
    if (!options_ended && word == "--") {
      options_ended = true;
      continue;
    }
    if (!is_option) {
      if (parsed.command.empty()) {
        parsed.command = word;
      } else {
        parsed.positional.push_back(word);
      }
      continue;
    }
    const OptionSpec* spec = nullptr;
    std::optional<std::string> inline_value;
    std::string shown = word;
    if (word.rfind("--", 0) == 0) {
      std::string name = word.substr(2);
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
        shown = "--" + name;
      }
      spec = FindLong(options, name);
    } else if (word.size() == 2) {
      spec = FindShort(options, word[1]);
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown option '", shown, "'", parsed.command.empty() ? "" : " for '" + parsed.command + "'"));
    }
    std::string value = "true";
    if (spec->takes_value) {
      if (inline_value.has_value()) {
        value = *inline_value;
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("option '", shown, "' needs a value"));
      }
    } else if (inline_value.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("option '", shown, "' takes no value"));
    }
    std::vector<std::string>& values = parsed.options[spec->name];
    if (!spec->repeated && !values.empty() && spec->takes_value) {
      return absl::InvalidArgumentError(absl::StrCat("option '", shown, "' given twice"));
    }
    values.push_back(value);
  }
  return parsed;
}

absl::StatusOr<int64_t> ParseId(const std::string& text, const std::string& what) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a non-negative integer, got '", text, "'"));
  }
  return value;
}

}  // namespace nmsparse::cli
