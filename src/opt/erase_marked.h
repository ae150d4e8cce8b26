// Dropping the statements of a block a pass has marked, keeping the order of the rest: what
// CSE-like passes do once their walk of the block is over (the walk holds pointers into the
// block, so nothing may move before).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace cot::opt {

inline void erase_marked(ir::Block& b, const std::vector<bool>& drop) {
  size_t out = 0;
  for (size_t k = 0; k < b.stmts.size(); ++k) {
    if (drop[k]) continue;
    if (out != k) b.stmts[out] = std::move(b.stmts[k]);
    ++out;
  }
  b.stmts.resize(out);
}

}  // namespace cot::opt
