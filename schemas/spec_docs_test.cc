// The committed JSON Schemas and docs key tables are what the key tables give (schemas/spec_docs.h).
#include "schemas/spec_docs.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

std::string ReadAll(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// The first line where two texts differ, for the failure message.
std::string FirstDifference(const std::string& want, const std::string& have) {
  std::istringstream a(want), b(have);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la)),
               more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "";
    if (la != lb || more_a != more_b) {
      return "line " + std::to_string(line) + ":\n  tables give: " + la + "\n  file has:    " + lb;
    }
  }
}

TEST(SpecDocsTest, CommittedFilesAreWhatTheKeyTablesGive) {
  for (const GeneratedFile& file : GeneratedFiles()) {
    const std::string current = ReadAll(file.path);
    ASSERT_FALSE(current.empty()) << file.path;
    const absl::StatusOr<std::string> want = GeneratedText(file.path, current);
    ASSERT_TRUE(want.ok()) << file.path << ": " << want.status();
    EXPECT_TRUE(*want == current) << file.path
                                  << " is not what the key tables give; regenerate it with\n"
                                     "  bazel run //schemas:spec_docs_writer\nfirst difference at "
                                  << FirstDifference(*want, current);
  }
}

TEST(SpecDocsTest, DocsHaveTheirKeyTables) {
  for (const GeneratedFile& file : GeneratedFiles()) {
    if (file.whole) continue;
    EXPECT_NE(ReadAll(file.path).find("<!-- key table: "), std::string::npos) << file.path;
  }
}

TEST(SpecDocsTest, MarkersAreChecked) {
  EXPECT_FALSE(WithKeyTables("<!-- key table: nope -->\n<!-- end of key table -->\n").ok());
  EXPECT_FALSE(WithKeyTables("<!-- key table: search -->\nno end\n").ok());
  const auto filled = WithKeyTables("a\n<!-- key table: search (x) -->\nold\n<!-- end of key table -->\nb\n");
  ASSERT_TRUE(filled.ok()) << filled.status();
  EXPECT_EQ(*filled, "a\n<!-- key table: search (x) -->\n" + KeyTableMarkdown("search") +
                         "<!-- end of key table -->\nb\n");
}

}  // namespace
}  // namespace nmsparse
