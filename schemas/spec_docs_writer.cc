// Writes what the key tables give into the source tree: the JSON Schemas and the docs' key tables
// (schemas/spec_docs.h). Run it after changing a key table:
//
//   bazel run //schemas:spec_docs_writer
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "schemas/spec_docs.h"

int main() {
  const char* root = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (root == nullptr) {
    std::cerr << "spec_docs_writer: run it with bazel run //schemas:spec_docs_writer\n";
    return 2;
  }
  for (const nmsparse::GeneratedFile& file : nmsparse::GeneratedFiles()) {
    const std::string path = std::string(root) + "/" + file.path;
    std::stringstream current;
    current << std::ifstream(path).rdbuf();
    const absl::StatusOr<std::string> text = nmsparse::GeneratedText(file.path, current.str());
    if (!text.ok()) {
      std::cerr << "spec_docs_writer: " << file.path << ": " << text.status().message() << "\n";
      return 1;
    }
    if (*text == current.str()) continue;
    std::ofstream(path) << *text;
    std::cout << "wrote " << file.path << "\n";
  }
  return 0;
}
