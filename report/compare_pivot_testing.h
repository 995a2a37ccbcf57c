// A recipe x N:M sweep and its runs, as the compare pivot's tests and nmctl's table tests build them.
#ifndef NMSPARSE_REPORT_COMPARE_PIVOT_TESTING_H_
#define NMSPARSE_REPORT_COMPARE_PIVOT_TESTING_H_

#include <cstdint>
#include <string>

#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::report::testing {

// Grid axes "recipe" (dense, srste, mdgf_exp) then "nm" (2:4, 1:8).
v1::SweepSpec RecipeByNmSweep();

// A run labelled recipe (and nm, unless empty); a SUCCEEDED one has final metric top1.
v1::Run RecipeRun(int64_t id, const std::string& recipe, const std::string& nm, v1::RunState state,
                  double top1);

}  // namespace nmsparse::report::testing

#endif  // NMSPARSE_REPORT_COMPARE_PIVOT_TESTING_H_
