#include "report/compare_pivot_testing.h"

namespace nmsparse::report::testing {

v1::SweepSpec RecipeByNmSweep() {
  v1::SweepSpec spec;
  v1::GridAxis* recipe = spec.add_grid();
  recipe->set_name("recipe");
  for (const char* label : {"dense", "srste", "mdgf_exp"}) recipe->add_values()->set_label(label);
  v1::GridAxis* nm = spec.add_grid();
  nm->set_name("nm");
  for (const char* label : {"2:4", "1:8"}) nm->add_values()->set_label(label);
  return spec;
}

v1::Run RecipeRun(int64_t id, const std::string& recipe, const std::string& nm, v1::RunState state,
                  double top1) {
  v1::Run run;
  run.set_id(id);
  run.set_state(state);
  (*run.mutable_labels())["recipe"] = recipe;
  if (!nm.empty()) (*run.mutable_labels())["nm"] = nm;
  if (state == v1::SUCCEEDED) (*run.mutable_final_metrics())["top1"] = top1;
  return run;
}

}  // namespace nmsparse::report::testing
