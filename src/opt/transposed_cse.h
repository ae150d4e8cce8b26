// Sharing a generator equal to a dominating one up to the order of its indices (pass
// "transposed-cse").
//
// Reverse mode builds the same per-point value once per consumer, each in the layout its
// consumer reads: the GMM gradient computes `for i, k, r. 2 * Qx[i, k, r] * g[k, i]` for the
// means and `for k, r, i. 2 * Qx[i, k, r] * g[k, i]` for the covariance factors. When a
// generator `t2 = for j_1..j_n. e` is equal to a dominating `t1 = for i_1..i_n. e'` once
// j_k is renamed to i_p(k) for a permutation p of its indices (with equal extents), and every
// use of t2 is a read of one element, `t2[a_1, ..., a_n]`, each read becomes
// `t1[b_1, ..., b_n]` with b_p(k) = a_k, and t2 is dropped.
//
// Values are kept (the same body at the same point); so are errors and strong zeros: t1 ran,
// over the same points, before t2 would have (a generator's elements carry no strong zeros).
// The interpreter's op count can only drop. Identity permutations are left to "cse".
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult share_transposed_generators(const ir::Program& program, const ir::Function& f);
// No generator whose uses are all element reads equals a dominating one up to a non-identity
// permutation of its indices.
std::optional<std::string> transposed_cse_postcondition(const ir::Program& program,
                                                        const ir::Function& f);

}  // namespace cot::opt
