#include "opt/fuse.h"

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "index/smith_normal_form.h"
#include "ir/clone.h"
#include "ir/printer.h"
#include "ir/rewriter.h"
#include "ir/uses.h"
#include "opt/dynamic_sizes.h"
#include "opt/static_cost.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

using ir::Atom;
using ir::Block;
using ir::Stmt;
using ir::VarId;
using Kind = ScopeFrame::Kind;

// A generator seen on the way to a read: where it is bound and what it computes (a copy taken
// after its own body was rewritten).
struct Producer {
  size_t depth = 0;  // index of the frame of the block that binds it
  std::shared_ptr<const Stmt> stmt;
  bool cost_free = false;
};

bool is_bare_var(const Affine& a) {
  return a.constant_term() == 0 && a.terms().size() == 1 && a.terms()[0].second == 1;
}

// Whether the affine indices determine the variables `cols` (full column rank).
bool determines(const std::vector<const Affine*>& rows, const std::vector<VarId>& cols) {
  if (cols.empty()) return true;
  if (rows.size() < cols.size()) return false;
  IntMatrix m(static_cast<int>(rows.size()), static_cast<int>(cols.size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < cols.size(); ++c) {
      m.at(static_cast<int>(r), static_cast<int>(c)) = rows[r]->coeff(cols[c]);
    }
  }
  auto snf = smith_normal_form(m);
  return snf && snf->rank == static_cast<int>(cols.size());
}

class Fuser : public ir::Rewriter<Fuser> {
 public:
  Fuser(ir::Function& f, bool only_cost_free, bool check_only, const ir::Program* program = nullptr)
      : Rewriter(f),
        f_(f),
        only_cost_free_(only_cost_free),
        check_only_(check_only),
        program_(program) {}

  // One pass over the function; returns whether a read was fused (or found, in check mode).
  bool run() {
    uses_ = ir::use_counts(f_);
    Rewriter::rewrite();
    if (changed_ && !check_only_) remove_dead_producers(f_.body, ir::use_counts(f_));
    return changed_;
  }
  const std::optional<std::string>& found() const { return found_; }

  struct Plan {
    const Producer* producer;
  };

  void apply_subst(Stmt& s) {
    if (subst_.empty()) return;
    Block tmp;
    tmp.stmts.push_back(std::move(s));
    substitute_uses(tmp, subst_);
    s = std::move(tmp.stmts[0]);
  }

  void visit(Stmt& s, ir::StmtList& out) {
    apply_subst(s);
    Rewriter::visit(s, out);
  }

  void on_index(Stmt& s, ir::IndexOp& ix, ir::StmtList& out) {
    if (auto plan = decide(ix)) {
      changed_ = true;
      if (check_only_) {
        if (!found_) found_ = describe(s, *plan);
      } else {
        rewrite(s, *plan, out);
        return;
      }
    }
    keep(s, out);
  }

  void on_gen(Stmt& s, ir::GenOp& /*g*/, ir::StmtList& out) {
    rewrite_regions(s);
    if (s.results.size() == 1 && uses_[static_cast<size_t>(s.results[0])] > 0) {
      auto copy = std::make_shared<const Stmt>(s);
      const bool free = cheap_to_copy(copy->as<ir::GenOp>()->body);
      producers_[s.results[0]] = Producer{scope().depth() - 1, std::move(copy), free};
    }
    out.push_back(std::move(s));
  }

  void after_block(Block& b) {
    // Producers of this block all of whose reads were fused are dead now (their reads all lie
    // in this block's scope, and copies of bodies contain only reads that were not fused).
    if (!check_only_ && !plan_fused_.empty()) {
      std::erase_if(b.stmts, [&](const Stmt& s) {
        return s.as<ir::GenOp>() != nullptr && s.results.size() == 1 &&
               plan_fused_.count(s.results[0]) != 0 &&
               uses_[static_cast<size_t>(s.results[0])] == 0;
      });
    }
    if (!subst_.empty()) {
      for (auto& a : b.results) {
        if (!a.is_var) continue;
        if (auto it = subst_.find(a.var); it != subst_.end()) a = it->second;
      }
    }
  }

 private:
  bool in_range(const Affine& a, const SizeExpr& extent) {
    return scope().facts().proves_in_range(f_, a, extent);
  }

  // Rule (a): a cost-free body that does constant work per element (no nested generators,
  // reductions, scatters or loops), so copying it to every read costs no operations and no
  // asymptotic time.
  bool cheap_to_copy(const Block& body) const {
    if (!is_cost_free(f_, body)) return false;
    return std::none_of(body.stmts.begin(), body.stmts.end(),
                        [](const Stmt& s) { return repeats(s); });
  }

  std::optional<Plan> decide(const ir::IndexOp& ix) {
    if (!ix.tensor.is_var || ix.indices.empty()) return std::nullopt;
    auto it = producers_.find(ix.tensor.var);
    if (it == producers_.end()) return std::nullopt;
    const Producer& p = it->second;
    const auto& g = *p.stmt->as<ir::GenOp>();
    const size_t m = std::min(ix.indices.size(), g.ivars.size());
    std::vector<const Affine*> rows;
    for (size_t d = 0; d < m; ++d) {
      // (5.21) needs the access to be in bounds: a read out of range must still fail.
      if (!ix.indices[d].is_affine) return std::nullopt;
      if (!in_range(ix.indices[d].affine, g.ivars[d].extent)) return std::nullopt;
      rows.push_back(&ix.indices[d].affine);
    }
    if (p.cost_free) return Plan{&p};
    if (only_cost_free_) return std::nullopt;
    if (uses_[static_cast<size_t>(ix.tensor.var)] != 1) return std::nullopt;
    std::vector<VarId> cols;
    const auto& frames = scope().frames();
    for (size_t k = p.depth + 1; k < frames.size(); ++k) {
      const ScopeFrame& fr = frames[k];
      if (fr.kind == Kind::ForBody || fr.kind == Kind::WhileBody || fr.kind == Kind::WhileCond) {
        return std::nullopt;  // the read runs many times per element
      }
      for (const auto& iv : fr.ivars) cols.push_back(iv.var);
    }
    if (!determines(rows, cols)) return std::nullopt;
    return Plan{&p};
  }

  std::string describe(const Stmt& s, const Plan& plan) const {
    ir::Program none;
    return "the read " + ir::print_stmt(program_ != nullptr ? *program_ : none, f_, s) +
           " of the generator " +
           f_.vars[static_cast<size_t>(plan.producer->stmt->results[0])].name +
           (plan.producer->cost_free ? " (cost-free)" : " (single injective use)") +
           " can be fused";
  }

  // c1*x1 + ... + k as emitted i64 statements (for non-affine uses of a substituted variable).
  Atom emit_affine(const Affine& a, std::vector<Stmt>& out, Span span) {
    auto emit = [&](Prim p, Atom x, Atom y) {
      VarId r = f_.new_var("", Type::scalar(Scalar::I64));
      out.push_back(Stmt{{r}, ir::PrimOp{p, {x, y}}, span});
      return Atom::of(r);
    };
    std::optional<Atom> acc;
    for (const auto& [v, c] : a.terms()) {
      Atom term = c == 1 ? Atom::of(v) : emit(Prim::Mul, Atom::i64(c), Atom::of(v));
      acc = acc ? emit(Prim::Add, *acc, term) : term;
    }
    if (!acc) return Atom::i64(a.constant_term());
    if (a.constant_term() != 0) acc = emit(Prim::Add, *acc, Atom::i64(a.constant_term()));
    return *acc;
  }

  void rewrite(const Stmt& s, const Plan& plan, std::vector<Stmt>& out) {
    const auto& ix = *s.as<ir::IndexOp>();
    const Stmt& ps = *plan.producer->stmt;
    const auto& g = *ps.as<ir::GenOp>();
    const size_t k = g.ivars.size();
    const size_t n = ix.indices.size();
    const size_t m = std::min(n, k);
    const VarId r = s.results[0];
    ir::CloneMap map;
    for (size_t d = 0; d < m; ++d) {
      const VarId v = g.ivars[d].var;
      const Affine& a = ix.indices[d].affine;
      if (a.is_constant()) {
        map.atoms[v] = Atom::i64(a.constant_term());
      } else if (is_bare_var(a)) {
        map.atoms[v] = Atom::of(a.terms()[0].first);
      } else {
        map.affine[v] = a;
        if (used_non_affinely(g.body, v)) map.atoms[v] = emit_affine(a, out, s.span);
      }
    }
    plan_fused_.insert(ps.results[0]);
    --uses_[static_cast<size_t>(ps.results[0])];
    if (m < k) {
      // A slice: a generator over the remaining index variables.
      Block tmp;
      ir::GenOp rest;
      rest.ivars.assign(g.ivars.begin() + static_cast<ptrdiff_t>(m), g.ivars.end());
      rest.body = g.body;
      tmp.stmts.push_back(Stmt{{r}, std::move(rest), ps.span});
      tmp.results.push_back(Atom::of(r));
      Block c = ir::clone_block(f_, tmp, f_, map);
      const VarId copy = c.results[0].var;
      for (auto& cs : c.stmts) {
        for (auto& res : cs.results) {
          if (res == copy) res = r;
        }
        out.push_back(std::move(cs));
      }
      return;
    }
    Block c = ir::clone_block(f_, g.body, f_, map);
    for (auto& cs : c.stmts) out.push_back(std::move(cs));
    const Atom value = c.results[0];
    if (n > k) {
      ir::IndexOp more;
      more.tensor = value;
      more.indices.assign(ix.indices.begin() + static_cast<ptrdiff_t>(k), ix.indices.end());
      out.push_back(Stmt{{r}, std::move(more), s.span});
    } else {
      subst_[r] = value;
    }
  }

  void remove_dead_producers(Block& b, const std::vector<int>& uses) {
    std::vector<Stmt> keep;
    keep.reserve(b.stmts.size());
    for (auto& s : b.stmts) {
      if (s.as<ir::GenOp>() != nullptr && s.results.size() == 1 &&
          plan_fused_.count(s.results[0]) != 0 && uses[static_cast<size_t>(s.results[0])] == 0) {
        continue;
      }
      ir::for_each_region(s, [&](Block& body) { remove_dead_producers(body, uses); });
      keep.push_back(std::move(s));
    }
    b.stmts = std::move(keep);
  }

  ir::Function& f_;
  const bool only_cost_free_;
  const bool check_only_;
  const ir::Program* program_;
  std::vector<int> uses_;
  std::unordered_map<VarId, Producer> producers_;
  Substitution subst_;
  std::unordered_set<VarId> plan_fused_;
  bool changed_ = false;
  std::optional<std::string> found_;
};

constexpr int kMaxFuseRounds = 64;

}  // namespace

bool fuse_reads(ir::Function& f, bool only_cost_free) {
  bool any = false;
  for (int round = 0; round < kMaxFuseRounds; ++round) {
    Fuser fuser(f, only_cost_free, false);
    if (!fuser.run()) break;
    any = true;
  }
  // A fused producer that held a saving loop took its dynamic size with it (the copies at the
  // reads bind fresh ones).
  if (any) prune_dynamic_sizes(f);
  return any;
}

std::optional<std::string> find_fusible_read(const ir::Program& program, const ir::Function& f,
                                             bool only_cost_free) {
  ir::Function copy = f;
  Fuser fuser(copy, only_cost_free, true, &program);
  fuser.run();
  return fuser.found();
}

PassResult fuse_producers(const ir::Program& program, const ir::Function& f) {
  (void)program;
  ir::Function out = f;
  const bool changed = fuse_reads(out, false);
  return {std::move(out), changed};
}

std::optional<std::string> fuse_postcondition(const ir::Program& program, const ir::Function& f) {
  return find_fusible_read(program, f, false);
}

}  // namespace cot::opt
