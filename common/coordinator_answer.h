// The mark of a status that the coordinator itself sent, carried in the gRPC status's error details. gRPC
// reports a connection that failed and a coordinator that answered UNAVAILABLE (its database busy, locked or
// unwritable for a moment; it is shutting down) with the same code; nmctl reads this mark to say which
// happened, instead of asking whether nmserver runs when it does.
#ifndef NMSPARSE_COMMON_COORDINATOR_ANSWER_H_
#define NMSPARSE_COMMON_COORDINATOR_ANSWER_H_

namespace nmsparse {

inline constexpr char kCoordinatorAnswerMark[] = "nmsparse: answered by the coordinator";

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_COORDINATOR_ANSWER_H_
