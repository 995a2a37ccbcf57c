// How a log line's rank reads in `nmctl logs` and `nmctl watch`: its global rank on one node ("3"), its node
// and global rank on several ("node1/rank3"). nmworker numbers a gang's ranks RANK = node_rank x G + local
// rank (contract/rank_environment.h), so a line's node is its rank divided by G, the spec's resources.gpus,
// whichever workers an attempt ran on.
#ifndef NMSPARSE_CLI_RANK_TAG_H_
#define NMSPARSE_CLI_RANK_TAG_H_

#include <cstdint>
#include <string>

namespace nmsparse::cli {

class RankTag {
 public:
  RankTag() = default;  // One node.
  RankTag(int nodes, int ranks_per_node);
  // From a run's resolved spec; one node when the spec does not parse.
  static RankTag ForSpec(const std::string& resolved_spec);

  std::string operator()(uint32_t rank) const;
  bool several_nodes() const { return nodes_ > 1; }

 private:
  int nodes_ = 1;
  int ranks_per_node_ = 1;
};

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_RANK_TAG_H_
