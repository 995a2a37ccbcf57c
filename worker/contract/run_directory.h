// What nmworker and nmtrain agree on about run directories (<work_dir>/runs/<run id>/): the checkpoint's file
// name, and how a fork (nmctl fork) is told where its parent's checkpoint is. Standard library only, like
// trainer_contract.h, so that neither LibTorch nor gRPC crosses over.
#ifndef NMSPARSE_WORKER_CONTRACT_RUN_DIRECTORY_H_
#define NMSPARSE_WORKER_CONTRACT_RUN_DIRECTORY_H_

namespace nmsparse::contract {

// The checkpoint nmtrain keeps in its --out directory, and the one before it, which nmtrain falls back to
// when the newer one is damaged (worker/trainer/checkpoint.cc writes and reads both).
constexpr const char* kCheckpointFiles[] = {"checkpoint.pt", "checkpoint.prev.pt"};

// A fork: the agent passes `--init-from <work_dir>/runs/<parent run id>`, a directory named by the parent's
// run id only, never by a spec or a request. nmtrain starts from the checkpoint in that directory when its
// own --out directory has none yet (else it resumes its own), and fails with kExitUsage when there is none.
constexpr char kInitFromFlag[] = "--init-from";

}  // namespace nmsparse::contract

#endif  // NMSPARSE_WORKER_CONTRACT_RUN_DIRECTORY_H_
