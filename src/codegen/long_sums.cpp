#include "codegen/long_sums.h"

#include <utility>

#include "codegen/loop_ir_walk.h"
#include "codegen/may_fail.h"

namespace cot::codegen {

namespace {

// The loops of a sum's nest into `acc` (the loop `s` and the loops nested in its body) that may
// run in lanes. A loop of another sum, nested in a term of this one, belongs to that sum: it was
// marked for its own accumulator, and lanes of `acc` would not be its reduction.
void mark_nest(Stmt& s, LocalId acc) {
  auto* f = std::get_if<For>(&s.op);
  if (f == nullptr || (f->sum_of >= 0 && f->sum_of != acc)) return;
  for (Stmt& inner : f->body) mark_nest(inner, acc);
  if (!f->parallel && runs_long(*f) && !has_loop_or_buffer(f->body) && !may_fail(f->body)) {
    f->sum_into = acc;
  }
}

// Inner sums first, then the sums around them, as the lowering marked each sum when it was
// done.
void mark_body(Body& body) {
  for (Stmt& s : body) {
    for_each_body(s, [](Body& b) { mark_body(b); });
    if (auto* f = std::get_if<For>(&s.op); f != nullptr && f->sum_of >= 0 && !f->sum_masked) {
      mark_nest(s, f->sum_of);
    }
  }
}

}  // namespace

LoopFunction mark_long_sums(LoopFunction fn) {
  mark_body(fn.body);
  return fn;
}

}  // namespace cot::codegen
