#ifndef CHUNKPLAN_COMMON_STATUS_MACROS_H_
#define CHUNKPLAN_COMMON_STATUS_MACROS_H_

// Status propagation for functions that return absl::Status or
// absl::StatusOr<T>. Debian's abseil (20220623) ships no status macros, so
// chunkplan keeps its own two, here and nowhere else.

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define CHUNKPLAN_STATUS_CONCAT_INNER_(a, b) a##b
#define CHUNKPLAN_STATUS_CONCAT_(a, b) CHUNKPLAN_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status); returns it from the enclosing function
// unless it is OK.
#define CHUNKPLAN_RETURN_IF_ERROR(expr)                                       \
  do {                                                                        \
    if (::absl::Status chunkplan_status_ = (expr); !chunkplan_status_.ok()) { \
      return chunkplan_status_;                                               \
    }                                                                         \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); returns its status from the
// enclosing function unless it is OK, else moves its value into `lhs`, which
// may be a declaration (`auto x`) or an existing variable.
#define CHUNKPLAN_ASSIGN_OR_RETURN(lhs, rexpr) \
  CHUNKPLAN_ASSIGN_OR_RETURN_IMPL_(            \
      CHUNKPLAN_STATUS_CONCAT_(chunkplan_statusor_, __LINE__), lhs, rexpr)

#define CHUNKPLAN_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                     \
  if (!statusor.ok()) {                                        \
    return std::move(statusor).status();                       \
  }                                                            \
  lhs = std::move(statusor).value()

#endif  // CHUNKPLAN_COMMON_STATUS_MACROS_H_
