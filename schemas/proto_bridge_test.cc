#include "schemas/proto_bridge.h"

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "nmsparse/v1/sweep.pb.h"
#include "schemas/testing/generic_paths.h"

namespace nmsparse {
namespace {

ExperimentConfig Sample() {
  auto c = ParseExperimentYaml(R"(
name: bridge
seed: 12345678901
model: {name: vit_micro_patch4_28, drop_path_rate: 0.1}
data: {dataset: synthetic, train_subset: 100, hflip: 0.5}
optimizer: {lr: 0.003, weight_decay: 0, clip_grad_norm: 1}
schedule: {epochs: 4, warmup_epochs: 1}
resources: {gpus: 2}
sparsity:
  sparsity_type: STRUCTURED_NM
  decay_type: EXP
  n_sparsity: 1
  m_sparsity: 16
  n_sparsity_qkv: 2
  m_sparsity_qkv: 8
  sparsity_loc: FF,Q,K,V,O
  structure_decay_flag: true
  structure_decay_type: densify
  phases: []
)",
                               "sample.yaml");
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

// Two §7 groups: RigL with a cosine drop fraction, GMP with a cycle schedule.
constexpr char kDynamicYaml[] = R"(
name: dyn
model: {name: vit_micro_patch4_28}
data: {dataset: synthetic}
sparsity:
  - {param_filter: "blocks.*.mlp.*", algorithm: rigl, sparsity: 0.9, init_method: topk,
     drop_fraction: {type: cosine, start_value: 0.3, end_value: 0, end_step: 500},
     update: {freq: 20, start: 5, stop: 400}, balance_out_groups: 2}
  - {param_filter: [blocks.*.attn.qkv.weight], algorithm: gmp, balance_in_groups: 4,
     sparsity: {type: cycle, start_step: 3, cycle: [{type: power, start_value: 0, end_value: 0.5, end_step: 10},
                                                    {type: exp, start_value: 0.5, decay: 0.9, end_step: 4}]}}
)";

TEST(ProtoBridgeTest, ConfigProtoConfigRoundTrip) {
  const ExperimentConfig config = Sample();
  const v1::ExperimentSpec spec = ToProto(config);
  EXPECT_EQ(spec.name(), "bridge");
  EXPECT_EQ(spec.seed(), 12345678901u);
  EXPECT_EQ(spec.model().name(), "vit_micro_patch4_28");
  EXPECT_EQ(spec.data().dataset(), "synthetic");
  EXPECT_EQ(spec.optimizer().weight_decay(), 0.0);
  EXPECT_EQ(spec.sparsity().sparsity_type(), v1::SparsitySpec::STRUCTURED_NM);
  EXPECT_EQ(spec.sparsity().structure_decay_type(), v1::SparsitySpec::DENSIFY);
  EXPECT_EQ(spec.sparsity().m_sparsity_qkv(), 8u);
  EXPECT_EQ(spec.sparsity().sparsity_loc(), "FF,Q,K,V,O");
  auto back = FromProto(spec);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == config) << CanonicalYaml(*back) << "\nvs\n" << CanonicalYaml(config);

  ExperimentConfig phased = config;
  phased.sparsity.structure_decay_flag = false;
  phased.sparsity.phases = {{PhaseKind::kSparse, 0.75}, {PhaseKind::kFineTune, 0.25}};
  const v1::ExperimentSpec phased_spec = ToProto(phased);
  ASSERT_EQ(phased_spec.sparsity().phases_size(), 2);
  EXPECT_EQ(phased_spec.sparsity().phases(1).kind(), v1::Phase::FINE_TUNE);
  auto phased_back = FromProto(phased_spec);
  ASSERT_TRUE(phased_back.ok()) << phased_back.status();
  EXPECT_TRUE(*phased_back == phased);
}

// ToProto builds the message field by field; it must be exactly the generic YAML route's message.
TEST(ProtoBridgeTest, DirectConversionEqualsGenericOne) {
  ExperimentConfig config = Sample();
  std::vector<ExperimentConfig> configs = {ExperimentConfig(), config};
  config.name = "";
  config.data.path = "/data/shards";
  config.data.dataset = "shards";
  config.optimizer.lr = 0.00030518418816570113;
  config.optimizer.eps = 1e-300;
  config.sparsity.sparsity_type = SparsityType::kUnstructured;
  config.sparsity.decay_type = DecayType::kLinear;
  config.sparsity.structure_decay_type = StructureDecayType::kFine;
  config.sparsity.sparse_dim = SparseDim::kCol;
  config.sparsity.locations = {SparsityLocation::kO, SparsityLocation::kC};
  config.sparsity.phases = {{PhaseKind::kDense, 0.1}, {PhaseKind::kSparse, 0.7}, {PhaseKind::kFineTune, 0.2}};
  config.resources.cpu_threads = 0;
  configs.push_back(config);
  config.resources.precision = "bf16";
  configs.push_back(config);
  auto dynamic = ParseExperimentYaml(kDynamicYaml, "dyn.yaml");
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  configs.push_back(*dynamic);
  dynamic->sparsity.dynamic[0].param_filter.clear();    // The default filter; an empty repeated field.
  dynamic->sparsity.dynamic[1].sparsity.cycle.clear();  // A cycle of none.
  configs.push_back(*dynamic);
  for (const ExperimentConfig& c : configs) {
    const v1::ExperimentSpec direct = ToProto(c);
    const v1::ExperimentSpec generic = testing::ToProtoViaYaml(c);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(direct, generic))
        << direct.DebugString() << "\nvs\n"
        << generic.DebugString();
    EXPECT_EQ(direct.SerializeAsString(), generic.SerializeAsString());
  }
}

TEST(ProtoBridgeTest, DynamicGroupsRoundTrip) {
  auto config = ParseExperimentYaml(kDynamicYaml, "dyn.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  const v1::ExperimentSpec spec = ToProto(*config);
  EXPECT_EQ(spec.sparsity().sparsity_type(), v1::SparsitySpec::UNSTRUCTURED);
  ASSERT_EQ(spec.sparsity().dynamic_size(), 2);
  const v1::DynamicSparsityGroup& rigl = spec.sparsity().dynamic(0);
  EXPECT_EQ(rigl.algorithm(), v1::DynamicSparsityGroup::RIGL);
  EXPECT_EQ(rigl.init_method(), v1::DynamicSparsityGroup::TOPK);
  EXPECT_EQ(rigl.sparsity().type(), v1::Schedule::CONSTANT);
  EXPECT_EQ(rigl.sparsity().value(), 0.9);
  EXPECT_EQ(rigl.drop_fraction().type(), v1::Schedule::COSINE);
  EXPECT_EQ(rigl.drop_fraction().end_step(), 500u);
  EXPECT_EQ(rigl.update().freq(), 20u);
  EXPECT_EQ(rigl.update().stop(), 400u);
  EXPECT_EQ(rigl.param_filter(0), "blocks.*.mlp.*");
  EXPECT_EQ(rigl.balance_out_groups(), 2u);
  const v1::DynamicSparsityGroup& gmp = spec.sparsity().dynamic(1);
  EXPECT_EQ(gmp.sparsity().type(), v1::Schedule::CYCLE);
  ASSERT_EQ(gmp.sparsity().cycle_size(), 2);
  EXPECT_EQ(gmp.sparsity().cycle(0).exponent(), 3.0);
  EXPECT_EQ(gmp.sparsity().cycle(1).decay(), 0.9);
  auto back = FromProto(spec);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == *config) << CanonicalYaml(*back) << "\nvs\n" << CanonicalYaml(*config);
}

// The semi_structured section travels only when it chooses a layer, and comes back equal either way of
// dense_after (a oneof: only the member that is set is written).
TEST(ProtoBridgeTest, SemiStructuredTravelsWhenEnabled) {
  ExperimentConfig config = Sample();
  EXPECT_FALSE(ToProto(config).has_semi_structured());
  config.semi_structured.layers = {"blocks.*.mlp.fc1", "blocks.*.mlp.fc2"};
  config.semi_structured.activation_layers = {"blocks.0.attn.proj"};
  config.semi_structured.accelerate = Accelerate::kForce;
  config.semi_structured.mask = SemiStructuredMask::kTransposable;
  config.semi_structured.margin = 0.1;
  config.semi_structured.dense_after_fraction = 0.7;
  config.semi_structured.decision_cache = "/tmp/timings.tsv";
  ExperimentConfig by_phase = config;
  by_phase.semi_structured.dense_after_fraction = 1.0;
  by_phase.semi_structured.dense_after_phase = 0;
  for (const ExperimentConfig& c : {config, by_phase}) {
    const v1::ExperimentSpec spec = ToProto(c);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(spec, testing::ToProtoViaYaml(c)))
        << spec.DebugString() << "\nvs\n"
        << testing::ToProtoViaYaml(c).DebugString();
    auto back = FromProto(spec);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(back->semi_structured == c.semi_structured) << CanonicalYaml(*back);
  }
  const v1::SemiStructuredSpec wire = ToProto(config).semi_structured();
  EXPECT_EQ(wire.accelerate(), v1::SemiStructuredSpec::FORCE);
  EXPECT_EQ(wire.mask(), v1::SemiStructuredSpec::TRANSPOSABLE);
  EXPECT_EQ(wire.dense_after().fraction(), 0.7);
  EXPECT_EQ(ToProto(by_phase).semi_structured().dense_after().kind_case(), v1::DenseAfter::kPhase);

  v1::ExperimentSpec bad = ToProto(config);
  bad.mutable_semi_structured()->set_margin(1.0);
  EXPECT_EQ(FromProto(bad).status().message(),
            "semi_structured.margin: value 1 is out of range: must be in [0, 1)");
}

TEST(ProtoBridgeTest, WireZerosStayZeros) {
  ExperimentConfig config = Sample();
  config.optimizer.weight_decay = 0.0;
  config.seed = 0;
  auto back = FromProto(ToProto(config));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->optimizer.weight_decay, 0.0);
  EXPECT_EQ(back->seed, 0u);
}

// Mixup keys with defaults other than 0 are proto3 `optional`: unset reads as the default (1, 0.5), and an
// explicit 0 travels as 0.
TEST(ProtoBridgeTest, MixupProbabilitiesKeepTheirDefaultsAndZeros) {
  ExperimentConfig config = Sample();
  v1::ExperimentSpec unset = ToProto(config);
  EXPECT_FALSE(unset.optimizer().has_mixup_prob());
  auto back = FromProto(unset);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->optimizer.mixup_prob, 1.0);
  EXPECT_EQ(back->optimizer.mixup_switch_prob, 0.5);
  config.optimizer.mixup_prob = 0.0;
  config.optimizer.mixup_switch_prob = 0.0;
  config.optimizer.mixup_mode = "elem";
  back = FromProto(ToProto(config));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->optimizer.mixup_prob, 0.0);
  EXPECT_EQ(back->optimizer.mixup_switch_prob, 0.0);
  EXPECT_TRUE(*back == config);
}

// resources.precision: unset on the wire at fp32 (so fp32 specs serialize as before the field), set for bf16.
TEST(ProtoBridgeTest, PrecisionTravelsOnlyWhenNotFp32) {
  ExperimentConfig config = Sample();
  v1::ExperimentSpec fp32 = ToProto(config);
  EXPECT_EQ(fp32.resources().precision(), "");
  config.resources.precision = "bf16";
  const v1::ExperimentSpec bf16 = ToProto(config);
  EXPECT_EQ(bf16.resources().precision(), "bf16");
  auto back = FromProto(bf16);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->resources.precision, "bf16");
  EXPECT_TRUE(*back == config);
  fp32.mutable_resources()->set_precision("BF16");  // Case-insensitive, as in a spec file.
  EXPECT_EQ(FromProto(fp32)->resources.precision, "bf16");
  fp32.mutable_resources()->set_precision("fp16x");
  EXPECT_EQ(FromProto(fp32).status().message(),
            "resources.precision: value 'fp16x' is not one of fp32, bf16, fp16");
}

TEST(ProtoBridgeTest, FromProtoReportsBadValuesByKeyPath) {
  v1::ExperimentSpec spec = ToProto(Sample());
  spec.mutable_optimizer()->set_beta1(1.5);
  auto bad = FromProto(spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "optimizer.beta1: value 1.5 is out of range: must be in [0, 1)");
  spec = ToProto(Sample());
  spec.mutable_sparsity()->add_dynamic();
  EXPECT_EQ(FromProto(spec).status().message(),
            "sparsity.dynamic[0].sparsity: missing: a dynamic sparsity group needs its sparsity (a number in "
            "[0, 1] or a schedule)");
}

TEST(ProtoBridgeTest, GenericReflectionHandlesEnumsListsAndMaps) {
  YAML::Node node = YAML::Load(R"(
name: g
grid:
  - name: recipe
    values:
      - label: dense
        set: {sparsity.sparsity_type: DENSE}
      - label: srste
        set: {sparsity.sparsity_type: srste, sparsity.m_sparsity: "8"}
random:
  - {key: optimizer.lr, min: 0.0001, max: 0.01, log: True}
  - {key: data.dataset, choices: [synthetic, fashion_mnist]}
seed: 3
)");
  v1::SweepSpec sweep;
  ASSERT_TRUE(YamlToMessage(node, &sweep).ok());
  ASSERT_EQ(sweep.grid_size(), 1);
  EXPECT_EQ(sweep.grid(0).values(1).set().at("sparsity.m_sparsity"), "8");
  EXPECT_TRUE(sweep.random(0).log());
  EXPECT_EQ(sweep.random(1).choices_size(), 2);
  v1::SweepSpec again;
  ASSERT_TRUE(YamlToMessage(MessageToYaml(sweep), &again).ok());
  // Map entries have no order: compare as messages.
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(again, sweep)) << again.DebugString();

  v1::Phase phase;
  EXPECT_TRUE(YamlToMessage(YAML::Load("{kind: fine_tune, fraction: 0.5}"), &phase).ok());
  EXPECT_EQ(phase.kind(), v1::Phase::FINE_TUNE);
  EXPECT_EQ(YamlToMessage(YAML::Load("{kind: warm}"), &phase).message(),
            "line 1: kind: value 'warm' is not one of DENSE, SPARSE, FINE_TUNE");
  EXPECT_EQ(YamlToMessage(YAML::Load("{kind: DENSE, frac: 1}"), &phase, "phases[0]").message(),
            "line 1: phases[0].frac: unknown key; known keys: kind, fraction");
  v1::UpdateSchedule update;
  EXPECT_EQ(YamlToMessage(YAML::Load("freq: -1"), &update).message(),
            "line 1: freq: value -1 is out of range: must be >= 0");
}

}  // namespace
}  // namespace nmsparse
