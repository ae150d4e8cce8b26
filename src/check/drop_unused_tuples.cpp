#include "check/drop_unused_tuples.h"

#include <algorithm>

#include "ir/regions.h"
#include "ir/uses.h"

namespace cot::check {
namespace {

bool drop_in(ir::Block& b, const std::vector<int>& uses) {
  bool changed = false;
  auto dead = [&](const ir::Stmt& s) {
    if (!s.as<ir::TupleOp>() && !s.as<ir::ProjOp>() && !s.as<ir::SizeOp>()) return false;
    return uses[static_cast<size_t>(s.results[0])] == 0;
  };
  auto it = std::remove_if(b.stmts.begin(), b.stmts.end(), dead);
  changed = it != b.stmts.end();
  b.stmts.erase(it, b.stmts.end());
  for (auto& s : b.stmts) {
    ir::for_each_region(s, [&](ir::Block& r) { changed = drop_in(r, uses) || changed; });
  }
  return changed;
}

}  // namespace

void drop_unused_tuples(ir::Function& f) {
  // Dropping a projection can make its tuple unused: repeat until nothing changes.
  while (drop_in(f.body, ir::use_counts(f))) {
  }
}

}  // namespace cot::check
