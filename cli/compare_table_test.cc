#include "cli/compare_table.h"

#include "gtest/gtest.h"

namespace nmsparse::cli {
namespace {

using report::BuildComparePivot;

v1::SweepSpec TwoAxes() {
  v1::SweepSpec spec;
  v1::GridAxis* recipe = spec.add_grid();
  recipe->set_name("recipe");
  for (const char* label : {"dense", "srste", "mdgf_exp"}) recipe->add_values()->set_label(label);
  v1::GridAxis* nm = spec.add_grid();
  nm->set_name("nm");
  for (const char* label : {"2:4", "1:8"}) nm->add_values()->set_label(label);
  return spec;
}

v1::Run MakeRun(int64_t id, const std::string& recipe, const std::string& nm, v1::RunState state,
                double top1) {
  v1::Run run;
  run.set_id(id);
  run.set_state(state);
  (*run.mutable_labels())["recipe"] = recipe;
  if (!nm.empty()) (*run.mutable_labels())["nm"] = nm;
  if (state == v1::SUCCEEDED) (*run.mutable_final_metrics())["top1"] = top1;
  return run;
}

TEST(CompareTableTest, RowsFirstAxisColumnsSecondAxis) {
  const std::vector<v1::Run> runs = {
      MakeRun(1, "mdgf_exp", "1:8", v1::SUCCEEDED, 70.0), MakeRun(2, "dense", "2:4", v1::SUCCEEDED, 80.0),
      MakeRun(3, "dense", "2:4", v1::SUCCEEDED, 82.0),    MakeRun(4, "srste", "2:4", v1::RUNNING, 0),
      MakeRun(5, "srste", "1:8", v1::FAILED, 0),          MakeRun(6, "srste", "1:8", v1::QUEUED, 0),
  };
  EXPECT_EQ(RenderComparePivot(BuildComparePivot(TwoAxes(), runs, "top1")).Render(),
            "recipe    2:4               1:8\n"
            "--------  ----------------  ------\n"
            "dense     81 \u00b1 1.414 (n=2)  -\n"
            "srste     running           queued\n"
            "mdgf_exp  -                 70\n");
}

TEST(CompareTableTest, OneAxisGivesOneColumn) {
  v1::SweepSpec spec;
  v1::GridAxis* recipe = spec.add_grid();
  recipe->set_name("recipe");
  recipe->add_values()->set_label("dense");
  recipe->add_values()->set_label("srste");
  const std::vector<v1::Run> runs = {MakeRun(1, "dense", "", v1::SUCCEEDED, 91.25),
                                     MakeRun(2, "srste", "", v1::SUCCEEDED, 90.5)};
  EXPECT_EQ(RenderComparePivot(BuildComparePivot(spec, runs, "top1")).Render(),
            "recipe   top1\n"
            "------  -----\n"
            "dense   91.25\n"
            "srste    90.5\n");
}

}  // namespace
}  // namespace nmsparse::cli
