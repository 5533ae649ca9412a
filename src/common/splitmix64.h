#pragma once

// SplitMix64 (Steele, Lea and Flood 2014, "Fast splittable pseudorandom number generators"):
// a counter advanced by the golden gamma and mixed. Each output is a bijection of the counter,
// so a stream never repeats within 2^64 outputs, and the same seed gives the same stream on
// every platform (std distributions do not).

#include <cstdint>

namespace adserver {

// MurmurHash3's 64-bit finalizer (fmix64): a bijection that spreads every input bit over the
// output, for hash tables keyed by ids or bytes that are not uniformly distributed.
inline uint64_t Fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Advances `state` and returns its mixed value.
inline uint64_t SplitMix64Next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return SplitMix64Next(state_); }

 private:
  uint64_t state_;
};

}  // namespace adserver
