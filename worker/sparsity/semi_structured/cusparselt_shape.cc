#include "worker/sparsity/semi_structured/cusparselt_shape.h"

#include <c10/util/Exception.h>

#include <cstdlib>

namespace nmsparse {

OutputOrder OutputOrderFromEnv() {
  const char* value = std::getenv("NMSPARSE_CUSPARSELT_OUTPUT");
  const std::string order = value != nullptr ? value : "";
  TORCH_CHECK(order.empty() || order == "col" || order == "row", "NMSPARSE_CUSPARSELT_OUTPUT='", order,
              "' is not col or row");
  return order == "row" ? OutputOrder::kRow : OutputOrder::kColumn;
}

std::string ToString(OutputOrder order) { return order == OutputOrder::kRow ? "row" : "col"; }

LinearPlans PlansFor(const LinearGemm& g, bool transposable, OutputOrder order) {
  if (g.kind == SemiStructuredKind::kActivation)
    return {{g.m, g.n, g.k, g.dtype, false, false}, std::nullopt};
  const bool column = order == OutputOrder::kColumn;
  LinearPlans plans{{g.n, g.m, g.k, g.dtype, column, g.bias}, std::nullopt};
  if (transposable) plans.input_grad = CusparseLtShape{g.k, g.m, g.n, g.dtype, column, false};
  return plans;
}

}  // namespace nmsparse
