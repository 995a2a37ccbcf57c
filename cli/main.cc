// nmctl: the nmsparse command line. Commands and exit codes: docs/nmctl.md and `nmctl help`.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return nmsparse::cli::RunNmctl(args, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0);
}
