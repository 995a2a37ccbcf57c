// SubmitSweep with the production expander (schemas ExpandSweep): real validation errors reach the client as
// INVALID_ARGUMENT with the key path, and leave the database untouched.
#include "server/sweeps/schemas_expander.h"

#include "gtest/gtest.h"
#include "schemas/sweep.h"
#include "server/test_support.h"

namespace nmsparse::server {
namespace {

constexpr char kSweep[] = R"(name: real
base:
  model: {name: vit_micro_patch4_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 1}
  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
grid:
  sparsity.m_sparsity: [4, 8]
  recipe:
    dense: {sparsity.sparsity_type: DENSE}
    srste: {sparsity.sparsity_type: SRSTE}
)";

v1::SweepSpec Parse(const std::string& text) {
  auto s = ParseSweepYaml(text, "sweep.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : v1::SweepSpec();
}

TEST(SchemasExpanderTest, ExpandsIntoStorableRuns) {
  auto runs = ExpandWithSchemas(Parse(kSweep));
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 4u);
  const NewRun& last = (*runs)[3];
  EXPECT_EQ(last.index, 3u);
  ASSERT_EQ(last.labels.size(), 2u);
  EXPECT_EQ(last.labels[0], (std::pair<std::string, std::string>("sparsity.m_sparsity", "8")));
  EXPECT_EQ(last.labels[1], (std::pair<std::string, std::string>("recipe", "srste")));
  EXPECT_EQ(last.content_hash.size(), 64u);
  EXPECT_NE(last.content_hash, (*runs)[2].content_hash);
  EXPECT_NE(last.resolved_spec.find("vit_micro_patch4_28"), std::string::npos);
  EXPECT_NE(last.resolved_spec.find("\n  m_sparsity: 8\n"), std::string::npos) << last.resolved_spec;
  EXPECT_EQ(last.gpus, 1u);
}

// Issue 39: a run with initial weights but no digest of them is refused, naming the run, both keys and the
// path (its hash would not cover the file's content); with the digest it is stored, and two digests of one
// path give two hashes.
TEST(SchemasExpanderTest, InitialWeightsWithoutTheirDigestAreRefused) {
  v1::SweepSpec spec = Parse(kSweep);
  auto& set = *spec.mutable_grid(1)->mutable_values(1)->mutable_set();
  set["model.initial_checkpoint"] = "/data/w.safetensors";
  auto refused = ExpandWithSchemas(spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("run 1 (sparsity.m_sparsity=4, recipe=srste): "
                                            "model.initial_checkpoint_sha256 is required with "
                                            "model.initial_checkpoint '/data/w.safetensors'"),
            std::string::npos)
      << refused.status();
  set["model.initial_checkpoint_sha256"] = std::string(64, 'a');
  auto a = ExpandWithSchemas(spec);
  ASSERT_TRUE(a.ok()) << a.status();
  set["model.initial_checkpoint_sha256"] = std::string(64, 'b');
  auto b = ExpandWithSchemas(spec);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE((*a)[1].content_hash, (*b)[1].content_hash);
  EXPECT_EQ((*a)[0].content_hash, (*b)[0].content_hash);  // The run without a file is unchanged.
}

TEST(SchemasExpanderTest, InvalidSpecThroughTheServiceLeavesNoTrace) {
  std::string db = testing::TempDbPath("schemas_invalid");
  {
    testing::TestServer server(db, 10000, 5000, ExpandWithSchemas);
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Parse(kSweep);
    (*req.mutable_spec()->mutable_grid(0)->mutable_values(1)->mutable_set())["sparsity.m_sparsity"] = "1";
    v1::SubmitSweepResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = server.coordinator().SubmitSweep(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("m_sparsity"), std::string::npos) << s.error_message();

    *req.mutable_spec() = Parse(kSweep);
    grpc::ClientContext ok_ctx;
    ASSERT_TRUE(server.coordinator().SubmitSweep(&ok_ctx, req, &resp).ok());
    EXPECT_EQ(resp.runs_size(), 4);
  }
  EXPECT_EQ(testing::CountRows(db, "sweeps"), 1);
  EXPECT_EQ(testing::CountRows(db, "runs"), 4);
}

// The coordinator's own check refuses a grid with one invalid run whatever the grid's order, naming the run
// and the key (issue 25: run 1 reused run 0's "valid" from a memo keyed on a hand-kept list).
TEST(SchemasExpanderTest, EveryRunOfAGridIsValidatedWhateverItsOrder) {
  const std::string base =
      "name: grid\nbase:\n  model: {name: vit_nano_patch7_28}\n"
      "  data: {dataset: synthetic, batch_size: 64, synthetic_size: 256}\ngrid:\n";
  for (const auto& [values, run] : std::vector<std::pair<std::string, std::string>>{
           {"[1, 8]", "run 1 (optimizer.grad_accum_steps=8): "},
           {"[8, 1]", "run 0 (optimizer.grad_accum_steps=8): "}}) {
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Parse(base + "  optimizer.grad_accum_steps: " + values + "\n");
    std::string db = testing::TempDbPath("schemas_grid");
    testing::TestServer server(db, 10000, 5000, ExpandWithSchemas);
    v1::SubmitSweepResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = server.coordinator().SubmitSweep(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << values;
    EXPECT_NE(s.error_message().find(run + "data.batch_size"), std::string::npos) << s.error_message();
    EXPECT_NE(s.error_message().find("optimizer.grad_accum_steps 8"), std::string::npos) << s.error_message();
  }
}

}  // namespace
}  // namespace nmsparse::server
