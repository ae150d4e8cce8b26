// GradBench's Runs convention (design.md §14): call a function until
// it has run at least `min_runs` times and for at least `min_seconds` in all, timing each call.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace cot::gradbench {

// Calls `call` (returning false stops early: a failure) per the convention; returns the
// nanoseconds of each call, the failing one last.
template <class Call>
std::vector<int64_t> timed_runs(int64_t min_runs, double min_seconds, Call&& call) {
  std::vector<int64_t> ns;
  double total = 0.0;
  while (static_cast<int64_t>(ns.size()) < min_runs || total < min_seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = call();
    const auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    total += static_cast<double>(ns.back()) * 1e-9;
    if (!ok) break;
  }
  return ns;
}

}  // namespace cot::gradbench
