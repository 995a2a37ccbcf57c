#include "schemas/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace nmsparse {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Optimal string alignment distance: Levenshtein plus the swap of two neighbouring letters, the commonest
// typo ("epcohs").
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string ClosestWord(const std::string& word, const std::vector<std::string>& candidates) {
  // Words are short (keys, model names) and lists at most a few hundred: the quadratic distance is cheap.
  constexpr size_t kLongest = 200;
  if (word.empty() || word.size() > kLongest) return "";
  const std::string lower = Lower(word);
  const size_t limit = std::max<size_t>(1, word.size() / 4);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    if (candidate.size() > kLongest || candidate == word) continue;
    const size_t distance = EditDistance(lower, Lower(candidate));
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string closest = ClosestWord(word, candidates);
  return closest.empty() ? "" : " (did you mean '" + closest + "'?)";
}

}  // namespace nmsparse
