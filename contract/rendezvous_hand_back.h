// How node 0's nmworker tells the coordinator that an attempt's rendezvous port is taken (another program
// listens there): it hands the attempt back unstarted (CompleteRun, outcome QUEUED) with this code as the
// exit_code, so that the coordinator counts such hand-backs and fails the attempt once every port of its
// --rendezvous_ports range was found taken, instead of handing out ports for ever. 98 is Linux's EADDRINUSE.
// Standard library only, like all of contract/.
#ifndef NMSPARSE_CONTRACT_RENDEZVOUS_HAND_BACK_H_
#define NMSPARSE_CONTRACT_RENDEZVOUS_HAND_BACK_H_

namespace nmsparse::contract {

constexpr int kRendezvousPortTaken = 98;

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_RENDEZVOUS_HAND_BACK_H_
