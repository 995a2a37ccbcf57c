// "did you mean" for a misspelt key or model name: the known word closest to what was written, when it is
// close enough to be a typo (docs/sweeps.md, "Checked before anything runs").
#ifndef NMSPARSE_SCHEMAS_DID_YOU_MEAN_H_
#define NMSPARSE_SCHEMAS_DID_YOU_MEAN_H_

#include <string>
#include <vector>

namespace nmsparse {

// The candidate at the smallest edit distance (insertions, deletions, substitutions and swaps of two
// neighbours, case-insensitive) from `word`, when that distance is at most max(1, |word| / 4); else "". The
// first of equally close candidates wins.
std::string ClosestWord(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'warmup_epochs'?)" for ClosestWord's answer, or "" when there is none.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_DID_YOU_MEAN_H_
