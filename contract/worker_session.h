// How a worker proves, on every call after Register, that it is the process that registered: the session
// secret Register returned, sent as gRPC metadata. A worker id alone proves nothing (any holder of the shared
// worker token can name any id); the session binds the id to one registration (docs/security.md).
#ifndef NMSPARSE_CONTRACT_WORKER_SESSION_H_
#define NMSPARSE_CONTRACT_WORKER_SESSION_H_

namespace nmsparse::contract {

// The metadata key (gRPC keys are lower case).
constexpr char kWorkerSessionMetadata[] = "nmsparse-worker-session";

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_WORKER_SESSION_H_
