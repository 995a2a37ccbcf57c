#include "common/program_flags.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "absl/flags/internal/program_name.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "common/version.h"

namespace nmsparse {

std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& a = args[i];
    if (a == "--") break;
    if (a.rfind("--", 0) != 0) continue;
    const size_t end = std::min(a.find('='), a.size());
    std::replace(a.begin() + 2, a.begin() + static_cast<std::ptrdiff_t>(end), '-', '_');
  }
  return args;
}

std::vector<std::string> RepeatedFlagValues(int argc, char** argv, const std::string& name) {
  const std::vector<std::string> args = NormalizeFlagNames(argc, argv);
  const std::string flag = "--" + name;
  std::vector<std::string> values;
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    std::string value;
    if (args[i].rfind(flag + "=", 0) == 0) {
      value = args[i].substr(flag.size() + 1);
    } else if (args[i] == flag && i + 1 < args.size()) {
      value = args[++i];
    } else {
      continue;
    }
    for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipEmpty())) values.emplace_back(part);
  }
  return values;
}

bool PrintVersionIfAsked(const std::vector<std::string>& args, const std::string& program) {
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    if (args[i] == "--version") {
      std::cout << VersionText(program);
      return true;
    }
  }
  return false;
}

size_t FirstUnknownFlag(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-') continue;
    std::string name = a.substr(a[1] == '-' ? 2 : 1);
    const bool inline_value = name.find('=') != std::string::npos;
    name = name.substr(0, name.find('='));
    if (const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name); flag != nullptr) {
      if (!inline_value && !flag->IsOfType<bool>()) ++i;  // "--name VALUE": the value may start with '-'.
      continue;
    }
    // Abseil's --noNAME for a boolean NAME.
    if (name.rfind("no", 0) == 0) {
      const absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) continue;
    }
    return i;
  }
  return 0;
}

std::optional<std::vector<std::string>> ParseProgramFlags(int argc, char** argv, const std::string& usage,
                                                          const std::string& main_file) {
  absl::SetProgramUsageMessage(usage);
  absl::flags_internal::SetProgramInvocationName(argv[0]);  // Set by parsing, which --help skips.
  std::vector<std::string> normalized = NormalizeFlagNames(argc, argv);
  if (PrintVersionIfAsked(normalized, usage.substr(0, usage.find(' ')))) return std::nullopt;
  for (size_t i = 1; i < normalized.size() && normalized[i] != "--"; ++i) {
    if (normalized[i] == "--help" || normalized[i] == "-h") {
      // The filter keeps the flags defined in files named like main_file minus its extension.
      const std::string stem = main_file.substr(0, main_file.rfind('.') + 1);
      absl::flags_internal::FlagsHelp(std::cout, stem, absl::flags_internal::HelpFormat::kHumanReadable,
                                      usage);
      return std::nullopt;
    }
  }
  // Abseil exits 1 on an unknown flag; a usage error is exit 2 in every nmsparse program.
  if (const size_t unknown = FirstUnknownFlag(normalized); unknown != 0) {
    const std::string program = usage.substr(0, usage.find(' '));
    const std::string as_written(argv[unknown]);
    std::cerr << program << ": unknown flag '" << as_written.substr(0, as_written.find('=')) << "' (see "
              << program << " --help)\n";
    std::exit(2);
  }
  std::vector<char*> args;
  for (std::string& a : normalized) args.push_back(a.data());
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  return std::vector<std::string>(positional.begin(), positional.end());
}

}  // namespace nmsparse
