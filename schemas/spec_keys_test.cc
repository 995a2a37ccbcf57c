// Every key of the key tables is a field of its proto message, a property of the committed JSON Schema and a
// row of the docs' key tables, and the other way round (input-only keys, such as sparsity.recipe, have no
// field). The tables are the one declaration; this test finds the copy that forgot a key.
#include "schemas/spec_keys.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nmsparse/v1/sweep.pb.h"
#include "schemas/experiment_config.h"
#include "schemas/model_catalog.h"
#include "schemas/sweep.h"
#include "schemas/sweep_blocks.h"
#include "schemas/yaml_util.h"

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

// The sweep file's keys are SweepSpec's fields (the experiment spec travels as YAML: its keys are the
// table's).
TEST(SpecKeysTest, EverySweepKeyIsAProtoFieldAndEveryFieldAKey) {
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

// Issue 40: the JSON Schema lists every name a spec may give model.name, timm's aliases (deit_*) included,
// from the one catalogue (ModelNames, ModelAliases).
TEST(SpecKeysTest, JsonSchemaModelNamesAreTheCatalogueAndItsAliases) {
  const Json experiment = Json::parse(ReadAll("schemas/experiment.schema.json"));
  const Json& names = experiment.at("oneOf").at(0).at("properties").at("model").at("properties").at("name");
  std::set<std::string> listed;
  for (const Json& name : names.at("enum")) listed.insert(name.get<std::string>());
  std::set<std::string> expected;
  for (const std::string& name : ModelNames()) expected.insert(name);
  ASSERT_FALSE(ModelAliases().empty());
  for (const auto& [alias, entry] : ModelAliases()) {
    EXPECT_EQ(listed.count(alias), 1u) << alias;
    expected.insert(alias);
  }
  EXPECT_EQ(listed, expected);
  EXPECT_EQ(listed.count("deit_tiny_patch16_224"), 1u);
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

// Values a key of this kind takes (valid ones), for the test below.
std::vector<std::string> SomeValues(const KeyInfo& key) {
  switch (key.kind) {
    case KeyKind::kInteger:
      return {absl::StrCat(static_cast<int64_t>(key.min)), absl::StrCat(static_cast<int64_t>(key.min) + 3)};
    case KeyKind::kNumber: {
      const double low = key.min_open ? key.min + 0.25 : key.min;
      return {yaml_util::FormatDouble(low),
              yaml_util::FormatDouble(std::isinf(key.max) ? low + 2.5 : (low + key.max) / 2)};
    }
    case KeyKind::kBoolean:
      return {"true", "false"};
    case KeyKind::kEnum:
      return key.names;
    case KeyKind::kString:
      return {"x", "another"};
    default:
      return {};
  }
}

// The `validated` column says which keys ValidateExperiment reads; a key it does not mark never changes a
// verdict, on valid and invalid specs alike.
TEST(SpecKeysTest, KeysNotMarkedValidatedNeverChangeTheVerdict) {
  const std::vector<std::string> specs = {
      "{model: {name: vit_nano_patch7_28}, data: {dataset: synthetic, batch_size: 32}}",
      "{model: {name: vit_nano_patch7_28}, data: {dataset: synthetic, batch_size: 32},"
      " sparsity: {sparsity_type: SRSTE, m_sparsity: 3}}",
      "{model: {name: vit_micro_patch4_28}, data: {dataset: synthetic, batch_size: 64, synthetic_size: 32}}",
      "{model: {name: vit_nano_patch7_28}, data: {batch_size: 30}, resources: {gpus: 4}}",
      "{model: {name: vit_nano_patch7_28}, sparsity: {sparsity_type: STRUCTURED_NM, structure_decay_flag: "
      "true,"
      " m_sparsity: 1024, n_sparsity: 1}, schedule: {epochs: 8}}",
  };
  int checked = 0;
  for (const KeyInfo& section : ExperimentKeys().Infos()) {
    std::vector<std::pair<std::string, KeyInfo>> keys;
    if (section.keys.empty()) keys.emplace_back(section.name, section);
    for (const KeyInfo& key : section.keys) keys.emplace_back(section.name + "." + key.name, key);
    for (const auto& [path, key] : keys) {
      if (key.validated || key.input_only) continue;
      for (const std::string& value : SomeValues(key)) {
        for (const std::string& text : specs) {
          YAML::Node spec = YAML::Load(text);
          const auto before = ParseExperimentNode(spec, "");
          ASSERT_TRUE(before.ok()) << text << before.status();
          ASSERT_TRUE(ApplyOverride(spec, path, value).ok()) << path << "=" << value;
          const auto after = ParseExperimentNode(spec, "");
          // A value the key's own reader refuses (a digest that is not 64 hex digits) never reaches
          // validation: it cannot change a verdict.
          if (!after.ok() && absl::StrContains(after.status().message(), path + ": value")) continue;
          ASSERT_TRUE(after.ok()) << path << "=" << value << ": " << after.status();
          EXPECT_EQ(ValidateExperiment(*before).ok(), ValidateExperiment(*after).ok())
              << path << "=" << value << " changes the verdict on " << text
              << ": mark it Validated() in its key table";
          ++checked;
        }
      }
    }
  }
  EXPECT_GE(checked, 100);
}

}  // namespace
}  // namespace nmsparse
