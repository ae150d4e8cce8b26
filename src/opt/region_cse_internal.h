// Private to region CSE's files (src/opt/region_cse*.cpp): what finding candidates, sharing a
// value and sharing a loop's trajectory have in common. What the pass does is in region_cse.h;
// where each part of it is:
//   region_cse.cpp             the driver: share one candidate at a time until none is left
//   region_cse_candidates.cpp  which values are candidates, and where one is (`locate`)
//   region_cse_filter.cpp      whether a later region may compute a candidate's value (a test
//                              by value numbers before a try)
//   region_cse_share.cpp       copies of a candidate in later regions (`probe`); sharing a value
//   region_cse_trajectory.cpp  sharing a plain loop's trajectory with the saving loops
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "index/predicate.h"
#include "ir/ir.h"

namespace cot::opt::region_cse_detail {

// The statement binding `v` and its block, anywhere in `b`; {nullptr, 0} when none does.
std::pair<ir::Block*, size_t> find_stmt(ir::Block& b, ir::VarId v);
std::pair<const ir::Block*, size_t> find_stmt(const ir::Block& b, ir::VarId v);

// When the value of `s` is a strong zero (whose additions the cost model does not charge, and
// which stays one through products), as conditions under which it is not: empty for a value
// that never is one; nullopt when it may be one otherwise (a sum of terms that may be strong
// zeros), which a read cannot reproduce. A sum whose term is a guard on an affine predicate is
// a strong zero exactly where no point of its range passes the guard: the predicate and the
// ranges with the summed variables projected away (Fourier-Motzkin), under the ranges of the
// index variables `around` it.
std::optional<std::vector<Pred>> not_strong_zero_when(const ir::Function& f, const ir::Stmt& s,
                                                      const std::vector<ir::IndexVar>& around = {});

// Injective mappings of `from` onto the index variables in scope at a later region's body, with
// equal extents, that use at least one of the region's own (`own`; the others are `outer`, of
// the regions around it), so each mapping has one deepest region to place its copy in. At most
// a few (kMaxMappings), each as the list of variables in `from`'s order.
std::vector<std::vector<ir::VarId>> mappings(const std::vector<ir::IndexVar>& from,
                                             const std::vector<ir::IndexVar>& outer,
                                             const std::vector<ir::IndexVar>& own);

// Calls visit(region statement, index variables of the regions around it) for every gen or
// reduce nested anywhere in `s`, s included, innermost first (so a visit may change the
// statement's body). The regions around are those between `s` and the region, on the path of
// nested blocks (bodies, branches, guards) that leads to it.
void for_each_index_region(
    ir::Stmt& s, const std::function<void(ir::Stmt&, const std::vector<ir::IndexVar>&)>& visit);

// A value `value` at the top of the body of the region statement binding `region`, or, when
// `inner` is set, at the top of the body of the gen or reduce binding `inner` at the top of
// that body (a value per point of both regions: R's index variables, then inner's).
struct Candidate {
  ir::VarId region = -1;
  ir::VarId value = -1;
  ir::VarId inner = -1;
  // Set when the value is at the top of the body of a guard at the top of inner's body (a
  // triangular sum's term): the guard's result.
  ir::VarId guard = -1;
};

// The candidates of `b` and of its nested blocks: costly values (static_cost.h) at the top of a
// region's body, or of a gen or reduce at the top of that body (also under a guard at the top
// of its body), computed from cost-free statements, varying with the point, and computed by
// some later region over the same ranges too (by a coarse signature; probing tells).
void find_candidates(const ir::Function& f, const ir::Block& b, std::vector<Candidate>& out);

// Where a candidate's value is: R's statement, the inner region's (or null) and the value's
// block and position; and the chain computing it, as a block yielding it (the value's slice,
// and for a nested value the cost-free statements of R's body it reads). nullopt when the
// value cannot be computed from cost-free statements and index variables alone.
struct Located {
  ir::Stmt* region = nullptr;
  ir::Stmt* inner = nullptr;
  ir::Block* block = nullptr;
  size_t q = 0;
  std::vector<ir::IndexVar> ivars;  // R's, then inner's
  ir::Block chain;
  Pred pred = Pred::truth();  // the guard's, when the value is under one
};
std::optional<Located> locate(const ir::Function& f, ir::Block& top, const Candidate& c);

// A copy of v's slice at the top of a later region, with R's index variables mapped to the
// region's.
struct Probe {
  ir::VarId copy = -1;        // the copy of v
  std::vector<ir::VarId> at;  // the region's index variables, in R's order
};

// R's value of candidate c in g and the chain computing it, with copies of the chain placed at
// the top of every later region over the same ranges; nullopt when the value cannot be computed
// from cost-free statements or `accept` refuses the chain (given R's statement).
struct Probed {
  std::vector<ir::IndexVar> ivars;
  ir::Block slice;
  std::vector<Probe> probes;
};
std::optional<Probed> probe(
    ir::Function& g, const Candidate& c,
    const std::function<bool(const ir::Block& slice, const ir::Stmt& region,
                             const std::vector<ir::IndexVar>& ivars)>& accept = nullptr);

// Whether a later region may compute candidate c's value again: false when no statement of a
// region a probe would go to has the value number (`vn`, value_numbers(f)) the probe's value
// would have there, so that try_share would fail (region_cse_filter.cpp). A test before the
// costly try; true does not promise a share.
bool may_share(const ir::Function& f, const std::vector<size_t>& vn, const Candidate& c);

// f with candidate c shared; nullopt when no later region computes its value again.
std::optional<ir::Function> try_share(const ir::Program& program, const ir::Function& f,
                                      const Candidate& c);

// f with the plain loop v of candidate c shared with the saving loops that later regions run at
// the same points, as its trajectory (region_cse_trajectory.cpp); nullopt when there are none.
std::optional<ir::Function> try_share_trajectory(const ir::Program& program, const ir::Function& f,
                                                 const Candidate& c);

}  // namespace cot::opt::region_cse_detail
