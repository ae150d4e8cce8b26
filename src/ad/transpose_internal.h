// Private to the transposer's files (src/ad/transpose*.cpp): what its rules share. The table of
// which rule is where is in transpose.h.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "ad/transpose.h"
#include "index/affine.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace cot::ad {

// A read of a variable inside nested regions: the chain of region statements from the
// statement being transposed down to the statement that reads it.
struct Transposer::Path {
  std::vector<const ir::Stmt*> stmts;  // original region statements, outermost first
  std::vector<int> region;             // which region of each (if: 0 then, 1 else)
  std::vector<size_t> pos;             // pos[k]: position of stmts[k] in its block (k >= 1)
  long final_pos = -1;  // position of the reader in the innermost block; -1: a result
  enum class Kind { Whole, Affine, Computed } kind = Kind::Whole;
  // Whole: the other readers of v in the same innermost block (same chain), whose
  // contributions are added at each point of one copy of the chain.
  std::vector<long> also;

  // The reading statement, in the original innermost region (final_pos >= 0).
  const ir::Stmt& reader() const;
  // Every read of v inside the regions of `s` (one path per reader, in evaluation order).
  static std::vector<Path> reads_in(const ir::Stmt& s, ir::VarId v);

 private:
  static void collect_reads(const ir::Stmt& st, ir::VarId v, Path chain, std::vector<Path>& out);
};

namespace transpose_detail {

// The regions the transposer copies per read (gen, sum, accum, guard bodies, if branches);
// a loop's body is not among them: a loop is transposed whole (transpose_loop.cpp).
std::vector<const ir::Block*> regions_of(const ir::Stmt& s);
// The index variables of a gen, sum or accum; nullptr for other statements.
const std::vector<ir::IndexVar>* ivars_of(const ir::Stmt& s);
// An i64 atom with the value of an affine expression.
ir::Atom emit_affine(ir::Builder& b, const Affine& a);
// `a` with the variables of `by` replaced by their values; nullopt on overflow.
std::optional<Affine> substitute_all(const Affine& a,
                                     const std::unordered_map<ir::VarId, Affine>& by);

}  // namespace transpose_detail
}  // namespace cot::ad
