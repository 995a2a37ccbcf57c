// ToProto field by field: the ExperimentSpec that YamlToMessage makes of ExperimentConfigToYaml, without the
// YAML round trip (every number survives it exactly: FormatDouble is the shortest exact form). Enum values go
// by name, as in the canonical YAML.
#include <cstdlib>
#include <iostream>

#include "absl/strings/ascii.h"
#include "schemas/proto_bridge.h"

namespace nmsparse {
namespace {

// The proto enum value named like the config's enum (ToString), e.g. SparsitySpec::SRSTE.
template <typename ProtoEnum>
ProtoEnum EnumByName(bool (*parse)(const std::string&, ProtoEnum*), const std::string& name) {
  ProtoEnum value{};
  if (!parse(name,
             &value)) {  // experiment.proto and sparsity_config.h are kept in step by proto_bridge_test.
    std::cerr << "nmsparse: enum value " << name << " is missing from experiment.proto\n";
    std::abort();
  }
  return value;
}

void FillModel(const ModelConfig& m, v1::ModelSpec* out) {
  out->set_name(m.name);
  out->set_num_classes(m.num_classes);
  out->set_img_size(m.img_size);
  out->set_in_chans(m.in_chans);
  out->set_drop_rate(m.drop_rate);
  out->set_drop_path_rate(m.drop_path_rate);
  out->set_attn_drop_rate(m.attn_drop_rate);
}

void FillData(const DataConfig& d, v1::DataSpec* out) {
  out->set_dataset(d.dataset);
  out->set_path(d.path);
  out->set_train_subset(d.train_subset);
  out->set_eval_subset(d.eval_subset);
  out->set_batch_size(d.batch_size);
  out->set_eval_batch_size(d.eval_batch_size);
  out->set_random_crop_padding(d.random_crop_padding);
  out->set_hflip(d.hflip);
  out->set_synthetic_size(d.synthetic_size);
}

void FillOptimizer(const OptimizerConfig& o, v1::OptimizerSpec* out) {
  out->set_name(o.name);
  out->set_lr(o.lr);
  out->set_weight_decay(o.weight_decay);
  out->set_beta1(o.beta1);
  out->set_beta2(o.beta2);
  out->set_eps(o.eps);
  out->set_clip_grad_norm(o.clip_grad_norm);
  out->set_label_smoothing(o.label_smoothing);
  out->set_mixup_alpha(o.mixup_alpha);
  out->set_grad_accum_steps(o.grad_accum_steps);
}

void FillSchedule(const ScheduleConfig& s, v1::ScheduleSpec* out) {
  out->set_epochs(s.epochs);
  out->set_warmup_epochs(s.warmup_epochs);
  out->set_min_lr(s.min_lr);
  out->set_warmup_lr(s.warmup_lr);
  out->set_log_every_steps(s.log_every_steps);
}

void FillStepSchedule(const StepSchedule& s, v1::Schedule* out) {
  out->set_type(EnumByName(&v1::Schedule::Type_Parse, ToString(s.type)));
  out->set_value(s.value);
  out->set_start_value(s.start_value);
  out->set_end_value(s.end_value);
  out->set_start_step(static_cast<uint64_t>(s.start_step));
  out->set_end_step(static_cast<uint64_t>(s.end_step));
  out->set_exponent(s.exponent);
  out->set_decay(s.decay);
  if (s.type != StepSchedule::Type::kCycle) return;  // StepScheduleToYaml writes `cycle` for CYCLE only.
  for (const StepSchedule& c : s.cycle) FillStepSchedule(c, out->add_cycle());
}

void FillDynamicGroup(const DynamicSparsityGroup& g, v1::DynamicSparsityGroup* out) {
  using G = v1::DynamicSparsityGroup;
  out->set_algorithm(EnumByName(&G::Algorithm_Parse, ToString(g.algorithm)));
  FillStepSchedule(g.sparsity, out->mutable_sparsity());
  FillStepSchedule(g.drop_fraction, out->mutable_drop_fraction());
  out->set_init_method(EnumByName(&G::InitMethod_Parse, ToString(g.init_method)));
  out->mutable_update()->set_freq(static_cast<uint64_t>(g.update.freq));
  out->mutable_update()->set_start(static_cast<uint64_t>(g.update.start));
  out->mutable_update()->set_stop(static_cast<uint64_t>(g.update.stop));
  for (const std::string& glob : g.param_filter) out->add_param_filter(glob);
  out->set_balance_out_groups(static_cast<uint32_t>(g.balance_out_groups));
  out->set_balance_in_groups(static_cast<uint32_t>(g.balance_in_groups));
}

void FillSparsity(const SparsityConfig& s, v1::SparsitySpec* out) {
  using S = v1::SparsitySpec;
  out->set_sparsity_type(EnumByName(&S::SparsityType_Parse, ToString(s.sparsity_type)));
  out->set_n_sparsity(s.nm.n);
  out->set_m_sparsity(s.nm.m);
  out->set_n_sparsity_qkv(s.nm_qkv.n);
  out->set_m_sparsity_qkv(s.nm_qkv.m);
  out->set_decay_type(EnumByName(&S::DecayType_Parse, ToString(s.decay_type)));
  out->set_decay_coef(s.decay_coef);
  out->set_structure_decay_flag(s.structure_decay_flag);
  out->set_structure_decay_type(EnumByName(&S::StructureDecayType_Parse, ToString(s.structure_decay_type)));
  out->set_structure_decay_start_multiple(s.structure_decay_start_multiple);
  out->set_dense_steps(s.dense_fraction);
  out->set_fine_tune_steps(s.fine_tune_fraction);
  out->set_sparsity_loc(SparsityLocationsToString(s.locations));
  out->set_sparse_dim(EnumByName(&S::SparseDim_Parse, ToString(s.sparse_dim)));
  out->set_prune_rate(s.prune_rate);
  out->set_srste_lambda(s.srste_lambda);
  for (const PhaseSpec& p : s.phases) {
    v1::Phase* phase = out->add_phases();
    phase->set_kind(EnumByName(&v1::Phase::Kind_Parse, ToString(p.kind)));
    phase->set_fraction(p.fraction);
  }
  for (const DynamicSparsityGroup& g : s.dynamic) FillDynamicGroup(g, out->add_dynamic());
}

void FillSemiStructured(const SemiStructuredConfig& c, v1::SemiStructuredSpec* out) {
  using S = v1::SemiStructuredSpec;
  for (const std::string& glob : c.layers) out->add_layers(glob);
  for (const std::string& glob : c.activation_layers) out->add_activation_layers(glob);
  out->set_accelerate(EnumByName(&S::Accelerate_Parse, absl::AsciiStrToUpper(ToString(c.accelerate))));
  out->set_mask(EnumByName(&S::Mask_Parse, absl::AsciiStrToUpper(ToString(c.mask))));
  out->set_margin(c.margin);
  if (c.dense_after_phase >= 0) {
    out->mutable_dense_after()->set_phase(static_cast<uint32_t>(c.dense_after_phase));
  } else {
    out->mutable_dense_after()->set_fraction(c.dense_after_fraction);
  }
  out->set_decision_cache(c.decision_cache);
}

}  // namespace

v1::ExperimentSpec ToProto(const ExperimentConfig& config) {
  v1::ExperimentSpec spec;
  spec.set_name(config.name);
  spec.set_seed(config.seed);
  FillModel(config.model, spec.mutable_model());
  FillData(config.data, spec.mutable_data());
  FillOptimizer(config.optimizer, spec.mutable_optimizer());
  FillSchedule(config.schedule, spec.mutable_schedule());
  FillSparsity(config.sparsity, spec.mutable_sparsity());
  spec.mutable_resources()->set_gpus(config.resources.gpus);
  spec.mutable_resources()->set_cpu_threads(config.resources.cpu_threads);
  // Left unset at its default, as the canonical YAML leaves it out (ExperimentConfig::resources.precision).
  if (config.resources.precision != ResourceConfig().precision) {
    spec.mutable_resources()->set_precision(config.resources.precision);
  }
  // Only when it chooses a layer, as the canonical YAML carries it (every other run keeps its hash).
  if (config.semi_structured.Enabled())
    FillSemiStructured(config.semi_structured, spec.mutable_semi_structured());
  return spec;
}

}  // namespace nmsparse
