// Command-line handling shared by the programs built on Abseil flags (nmserver, nmworker): flags may be
// spelled with dashes or underscores, and --help / -h prints the program's usage and its own flags on stdout
// and exits 0 (Abseil's built-in --help exits 1 and, for a binary whose main file is not named after it,
// lists no flags at all); --version prints the release (common/version.h) and exits 0.
#ifndef NMSPARSE_COMMON_PROGRAM_FLAGS_H_
#define NMSPARSE_COMMON_PROGRAM_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

namespace nmsparse {

// Parses argv into the ABSL_FLAGs; an unknown flag is a usage error (message on stderr, exit 2). Returns the
// positional arguments (argv[0] first), or nullopt when help or the version was printed and the program
// should exit 0. `usage` starts with the program's name. `main_file` is the source file that defines the
// program's flags (e.g. "server/main.cc"): help lists those.
std::optional<std::vector<std::string>> ParseProgramFlags(int argc, char** argv, const std::string& usage,
                                                          const std::string& main_file);

// The index in `args` (normalized, argv[0] first; up to "--") of the first flag that no ABSL_FLAG of this
// program defines; 0 when every flag is known. `--noNAME` is known for a boolean NAME.
size_t FirstUnknownFlag(const std::vector<std::string>& args);

// True when the arguments ask for the version (--version before any "--"); it is then printed.
bool PrintVersionIfAsked(const std::vector<std::string>& args, const std::string& program);

// argv with every "--some-flag" spelled "--some_flag" (values and arguments after "--" untouched).
std::vector<std::string> NormalizeFlagNames(int argc, char** argv);

// Every value of a repeatable flag, in order: "--name=a,b --name c" gives {a, b, c} (Abseil keeps only the
// last occurrence). `name` is spelled with underscores; dashes in argv match too.
std::vector<std::string> RepeatedFlagValues(int argc, char** argv, const std::string& name);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_PROGRAM_FLAGS_H_
