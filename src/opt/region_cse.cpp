// Region CSE's driver (region_cse.h): candidates are shared one at a time until none is left.
// Finding them, probing and sharing them are in the files region_cse_internal.h lists.
#include "opt/region_cse.h"

#include <array>
#include <map>
#include <set>
#include <string>

#include "ir/printer.h"
#include "ir/regions.h"
#include "opt/alpha_equal.h"
#include "opt/dce.h"
#include "opt/region_cse_internal.h"

namespace cot::opt {

using namespace region_cse_detail;

namespace {

using ir::Block;
using ir::Stmt;
using ir::VarId;

// The statements of `b` and of its nested regions.
size_t statement_count(const Block& b) {
  size_t n = b.stmts.size();
  for (const Stmt& s : b.stmts)
    ir::for_each_region(s, [&](const Block& r) { n += statement_count(r); });
  return n;
}

// Candidates tried and not shared, each with the number of shares made before it was tried.
// Trying one copies and rescans the whole function, and a share changes only the regions it
// touches, so the pass does not try a failed candidate again after each share; before it stops
// it tries once more those that failed before the last share (a share may have made them
// shareable), so it stops only where the unremembering search (the postcondition's) finds
// nothing to share. (Shares may come in another order than without the memo.)
using CandidateKey = std::array<VarId, 4>;
using FailedCandidates = std::map<CandidateKey, size_t>;

CandidateKey key_of(const Candidate& c) {
  return {c.region, c.value, c.inner, c.guard};
}

// Whether a search tests candidates by value numbers before probing them (the pass does; its
// postcondition does not, so that checking mode also checks the test).
enum class Test { ValueNumbers, None };

// The first candidate of f that can be shared (skipping those in `failed`, which gets those
// that fail, tagged with `shares`), applied.
std::optional<ir::Function> share_one(const ir::Program& program, const ir::Function& f, Test test,
                                      Candidate* which = nullptr,
                                      FailedCandidates* failed = nullptr, size_t shares = 0,
                                      RegionCseStats* stats = nullptr,
                                      std::set<CandidateKey>* seen = nullptr) {
  std::vector<Candidate> cands;
  find_candidates(f, f.body, cands);
  std::optional<std::vector<size_t>> numbers;  // value_numbers(f), at the first candidate
  for (const auto& c : cands) {
    if (failed != nullptr && failed->count(key_of(c))) continue;
    if (stats != nullptr) {
      ++stats->tried;
      if (seen != nullptr && seen->insert(key_of(c)).second) ++stats->distinct;
    }
    if (!numbers && test == Test::ValueNumbers) numbers = value_numbers(f);
    std::optional<ir::Function> g;
    if (test == Test::None || may_share(f, *numbers, c)) {
      if (stats != nullptr) ++stats->probed;
      g = try_share(program, f, c);
    }
    if (!g) g = try_share_trajectory(program, f, c);
    if (g) {
      if (which != nullptr) *which = c;
      return g;
    }
    if (failed != nullptr) failed->emplace(key_of(c), shares);
  }
  return std::nullopt;
}

}  // namespace

PassResult share_across_regions(const ir::Program& program, const ir::Function& f) {
  RegionCseStats stats;
  return share_across_regions(program, f, stats);
}

PassResult share_across_regions(const ir::Program& program, const ir::Function& f,
                                RegionCseStats& stats) {
  stats = {};
  std::set<CandidateKey> seen;
  // Dead statements first: a dead v costs nothing once removed, so materializing it would.
  // After each share the probes nothing merged into are dead too.
  ir::Function cur = eliminate_dead_code(program, f).function;
  bool changed = false;
  // Each share removes a recomputed statement, so there are at most as many shares as
  // statements (a chain of 65 nested calls needs 65: a fixed bound left work the postcondition
  // then reported as a compiler error); the bound only guards against a bug looping.
  const size_t max_shares = statement_count(cur.body) + 1;
  FailedCandidates failed;
  for (size_t k = 0; k < max_shares; ++k) {
    auto next = share_one(program, cur, Test::ValueNumbers, nullptr, &failed, k, &stats, &seen);
    if (!next) {
      // Those that failed before the last share are tried again on this function.
      const size_t before = failed.size();
      std::erase_if(failed, [&](const auto& entry) { return entry.second < k; });
      if (failed.size() == before) break;
      next = share_one(program, cur, Test::ValueNumbers, nullptr, &failed, k, &stats, &seen);
      if (!next) break;
    }
    cur = eliminate_dead_code(program, *next).function;
    changed = true;
    ++stats.shared;
  }
  // Without a share the dead code removed first stays: dce's work, not this pass's.
  if (!changed) return {f, false};
  return {std::move(cur), true};
}

std::optional<std::string> region_cse_postcondition(const ir::Program& program,
                                                    const ir::Function& f) {
  // As the pass sees it: dead statements are not work to share.
  ir::Function g = eliminate_dead_code(program, f).function;
  Candidate c;
  if (!share_one(program, g, Test::None, &c)) return std::nullopt;
  auto [b, k] = find_stmt(g.body, c.value);
  return "a later region computes again the value of `" + ir::print_stmt(program, g, b->stmts[k]) +
         "`";
}

}  // namespace cot::opt
