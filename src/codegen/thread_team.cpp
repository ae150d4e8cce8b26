#include "codegen/thread_team.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>
#if defined(__linux__)
#include <sched.h>
#endif

namespace cot::codegen {

namespace {

// What OpenMP starts by default: the first entry of $OMP_NUM_THREADS, else the processors this
// process may run on.
int default_team() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && n > 0) return static_cast<int>(std::min<long>(n, kMaxTeam));
  }
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

int creatable_team(int requested) {
  const int want = std::clamp(requested > 0 ? requested : default_team(), 1, kMaxTeam);
  if (want == 1) return 1;
  std::mutex m;
  std::condition_variable cv;
  bool release = false;
  std::vector<std::thread> probes;
  bool short_of_threads = false;
  try {
    // One thread more than the team needs: room for what the process allocates next.
    probes.reserve(static_cast<size_t>(want));
    while (static_cast<int>(probes.size()) < want) {
      probes.emplace_back([&] {
        // As a team's thread does: its own malloc arena (64 MiB of address space in glibc).
        // Through a volatile pointer, so that the compiler keeps the pair.
        void* volatile p = std::malloc(64);
        std::free(p);
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return release; });
      });
    }
  } catch (const std::exception&) {
    // No more threads (std::system_error), or no memory for one (std::bad_alloc).
    short_of_threads = true;
  }
  {
    std::lock_guard<std::mutex> lock(m);
    release = true;
  }
  cv.notify_all();
  for (std::thread& t : probes) t.join();
  if (!short_of_threads) return want;
  // At the system's limit, half of what started: the team's threads then allocate their own
  // memory (arenas, stacks of the code they run), which the probe's did not.
  return std::max(1, (1 + static_cast<int>(probes.size())) / 2);
}

}  // namespace cot::codegen
