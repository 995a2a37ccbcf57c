// Early-return helpers for absl::Status / absl::StatusOr (Abseil 20220623 has none public), for every
// program: NM_RETURN_IF_ERROR(expr) and NM_ASSIGN_OR_RETURN(lhs, expr).
#ifndef NMSPARSE_COMMON_STATUS_MACROS_H_
#define NMSPARSE_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define NM_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status _nm_status = (expr);      \
    if (!_nm_status.ok()) return _nm_status; \
  } while (0)

#define NM_CONCAT_INNER(a, b) a##b
#define NM_CONCAT(a, b) NM_CONCAT_INNER(a, b)
#define NM_ASSIGN_OR_RETURN(lhs, expr) NM_ASSIGN_OR_RETURN_IMPL(NM_CONCAT(_nm_statusor_, __LINE__), lhs, expr)
#define NM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#endif  // NMSPARSE_COMMON_STATUS_MACROS_H_
