// SplitMix64's finaliser: a counter-based 64-bit mixer (Steele, Lea and Flood 2014). The trainer's synthetic
// data and data order, and the report's sample of a large sweep's runs, draw from it: the same input gives
// the same output on every machine, with no generator state to carry.
#ifndef NMSPARSE_COMMON_SPLIT_MIX64_H_
#define NMSPARSE_COMMON_SPLIT_MIX64_H_

#include <cstdint>

namespace nmsparse {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_SPLIT_MIX64_H_
