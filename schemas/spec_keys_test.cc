// Every key of the key tables is a field of its proto message, a property of the committed JSON Schema and a
// row of the docs' key tables, and the other way round (input-only keys, such as sparsity.recipe, have no
// field). The tables are the one declaration; this test finds the copy that forgot a key.
#include "schemas/spec_keys.h"

#include <fstream>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nmsparse/v1/experiment.pb.h"
#include "nmsparse/v1/sweep.pb.h"
#include "schemas/experiment_config.h"
#include "schemas/sweep_blocks.h"

namespace nmsparse {
namespace {

using google::protobuf::Descriptor;
using Json = nlohmann::ordered_json;

std::string ReadAll(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

std::set<std::string> Names(const std::vector<KeyInfo>& keys, bool written_only) {
  std::set<std::string> names;
  for (const KeyInfo& key : keys) {
    if (!written_only || !key.input_only) names.insert(key.name);
  }
  return names;
}

const KeyInfo& Find(const std::vector<KeyInfo>& keys, const std::string& name) {
  for (const KeyInfo& key : keys) {
    if (key.name == name) return key;
  }
  ADD_FAILURE() << "no key " << name;
  static const KeyInfo kNone;
  return kNone;
}

// The keys of `keys` against the fields of `type`, and the keys of each map-valued key against its field's
// message, recursively.
void ExpectSameAsMessage(const std::vector<KeyInfo>& keys, const Descriptor* type, const std::string& path) {
  std::set<std::string> fields;
  for (int i = 0; i < type->field_count(); ++i) fields.insert(type->field(i)->name());
  EXPECT_EQ(Names(keys, /*written_only=*/true), fields) << path << " vs " << type->full_name();
  for (const KeyInfo& key : keys) {
    const auto* field = type->FindFieldByName(key.name);
    if (field == nullptr || key.keys.empty() || field->message_type() == nullptr) continue;
    ExpectSameAsMessage(key.keys, field->message_type(), path + "." + key.name);
  }
}

TEST(SpecKeysTest, EveryKeyIsAProtoFieldAndEveryFieldAKey) {
  ExpectSameAsMessage(ExperimentKeys().Infos(), v1::ExperimentSpec::descriptor(), "experiment");
  ExpectSameAsMessage(SweepKeyTable().Infos(), v1::SweepSpec::descriptor(), "sweep");
}

std::set<std::string> Properties(const Json& object) {
  std::set<std::string> names;
  for (const auto& [name, value] : object.at("properties").items()) names.insert(name);
  return names;
}

TEST(SpecKeysTest, EveryKeyIsInTheJsonSchemasAndEveryPropertyAKey) {
  const Json experiment = Json::parse(ReadAll("schemas/experiment.schema.json"));
  const Json& nested = experiment.at("oneOf").at(0);
  const std::vector<KeyInfo> keys = ExperimentKeys().Infos();
  EXPECT_EQ(Properties(nested), Names(keys, false));
  for (const KeyInfo& key : keys) {
    if (key.keys.empty() || key.name == "sparsity") continue;
    EXPECT_EQ(Properties(nested.at("properties").at(key.name)), Names(key.keys, false)) << key.name;
  }
  const KeyInfo& sparsity = Find(keys, "sparsity");
  const KeyInfo& group = Find(sparsity.keys, "dynamic");
  const Json& defs = experiment.at("$defs");
  EXPECT_EQ(Properties(defs.at("sparsity")), Names(sparsity.keys, false));
  EXPECT_EQ(Properties(defs.at("dynamic_group")), Names(group.keys, false));
  EXPECT_EQ(Properties(defs.at("schedule").at("oneOf").at(1)),
            Names(Find(group.keys, "sparsity").keys, false));
  EXPECT_EQ(Properties(defs.at("dynamic_group").at("properties").at("update")),
            Names(Find(group.keys, "update").keys, false));

  const Json sweep = Json::parse(ReadAll("schemas/sweep.schema.json"));
  EXPECT_EQ(Properties(sweep), Names(SweepKeyTable().Infos(), false));
  EXPECT_EQ(Properties(sweep.at("properties").at("early_stopping")),
            Names(EarlyStoppingKeyTable().Infos(), false));
  EXPECT_EQ(Properties(sweep.at("properties").at("search")), Names(SearchKeyTable().Infos(), false));
}

// The keys (first column, `key`) of the markdown key table NAME in `doc`.
std::set<std::string> DocTableKeys(const std::string& doc, const std::string& name) {
  std::set<std::string> keys;
  const size_t begin = doc.find("<!-- key table: " + name + " ");
  if (begin == std::string::npos) return keys;
  std::istringstream lines(doc.substr(begin, doc.find("<!-- end of key table -->", begin) - begin));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    keys.insert(line.substr(3, line.find('`', 3) - 3));
  }
  return keys;
}

TEST(SpecKeysTest, EveryKeyIsInTheDocsAndEveryDocumentedKeyInATable) {
  const std::vector<KeyInfo> keys = ExperimentKeys().Infos();
  std::set<std::string> paths;
  for (const KeyInfo& key : keys) {
    if (key.name == "sparsity") continue;  // docs/sparsity-method.md §6 has its own table.
    if (key.keys.empty()) paths.insert(key.name);
    for (const KeyInfo& sub : key.keys) paths.insert(key.name + "." + sub.name);
  }
  EXPECT_EQ(DocTableKeys(ReadAll("schemas/README.md"), "experiment"), paths);
  const KeyInfo& sparsity = Find(keys, "sparsity");
  const std::string method = ReadAll("docs/sparsity-method.md");
  EXPECT_EQ(DocTableKeys(method, "sparsity"), Names(sparsity.keys, false));
  EXPECT_EQ(DocTableKeys(method, "dynamic_group"), Names(Find(sparsity.keys, "dynamic").keys, false));
  const std::string sweeps = ReadAll("docs/sweeps.md");
  EXPECT_EQ(DocTableKeys(sweeps, "early_stopping"), Names(EarlyStoppingKeyTable().Infos(), false));
  EXPECT_EQ(DocTableKeys(sweeps, "search"), Names(SearchKeyTable().Infos(), false));
}

}  // namespace
}  // namespace nmsparse
