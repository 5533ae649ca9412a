#pragma once

// Counters for hot paths, sharded per thread: a thread adds to its own cache-line-aligned slot
// with a relaxed load and store (no lock prefix, no line shared with another thread) and a
// scrape sums the slots. The first kMaxThreads threads that count get a slot of their own;
// later ones share an overflow slot, updated with fetch_add.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace adserver {

namespace detail {
// This thread's index among the threads that ever counted (0, 1, ...), for every family.
size_t CountingThreadIndex();
}  // namespace detail

// N counters (indexed 0..N-1, e.g. an enum) per thread. Add: any thread, wait-free; Sum: any
// thread, a consistent-enough total (each slot is read once; counts only grow).
template <size_t N>
class ThreadCounters {
 public:
  static constexpr size_t kMaxThreads = 128;

  ThreadCounters() : slots_(std::make_unique<Slot[]>(kMaxThreads + 1)) {}
  ThreadCounters(const ThreadCounters&) = delete;
  ThreadCounters& operator=(const ThreadCounters&) = delete;

  void Add(size_t counter, uint64_t n = 1) {
    size_t t = detail::CountingThreadIndex();
    if (t < kMaxThreads) {
      std::atomic<uint64_t>& c = slots_[t].values[counter];
      c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    } else {
      slots_[kMaxThreads].values[counter].fetch_add(n, std::memory_order_relaxed);
    }
  }
  uint64_t Sum(size_t counter) const {
    uint64_t total = 0;
    for (size_t t = 0; t <= kMaxThreads; ++t) {
      total += slots_[t].values[counter].load(std::memory_order_relaxed);
    }
    return total;
  }
  static constexpr size_t size() { return N; }

 private:
  struct alignas(64) Slot {
    std::array<std::atomic<uint64_t>, N> values{};
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace adserver
