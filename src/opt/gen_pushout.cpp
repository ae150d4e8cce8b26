#include "opt/gen_pushout.h"

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/clone.h"
#include "ir/printer.h"
#include "ir/rewriter.h"
#include "ir/uses.h"
#include "opt/fuse.h"
#include "opt/static_cost.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

using ir::Atom;
using ir::Block;
using ir::Stmt;
using ir::VarId;

// --- where a guard's result may lose its strong zero ---------------------------------------

// The variables used somewhere a strong-zero tensor and a tensor of zeros may cost differently:
// anywhere but as the tensor of a read, a tuple element, or the result of a generator body
// (results_ok) or of the function.
void mask_unsafe(const Block& b, bool results_ok, std::unordered_set<VarId>& unsafe) {
  for (const auto& s : b.stmts) {
    if (const auto* ix = s.as<ir::IndexOp>()) {
      for (const auto& e : ix->indices) {
        if (e.is_affine) {
          for (const auto& [v, c] : e.affine.terms()) unsafe.insert(v);
        } else if (e.computed.is_var) {
          unsafe.insert(e.computed.var);
        }
      }
    } else if (s.as<ir::TupleOp>() == nullptr) {
      ir::for_each_direct_use(s.op, [&](VarId v) { unsafe.insert(v); });
    }
    const bool gen = s.as<ir::GenOp>() != nullptr;
    ir::for_each_region(s, [&](const Block& body) { mask_unsafe(body, gen, unsafe); });
  }
  if (!results_ok) {
    for (const auto& a : b.results) {
      if (a.is_var) unsafe.insert(a.var);
    }
  }
}

// --- (5.23) ---------------------------------------------------------------------------------

// The index of the generator statement a guard's body yields (no other statement of the body
// reads it), or nullopt.
std::optional<size_t> yielded_gen(const Stmt& s) {
  const auto* g = s.as<ir::GuardOp>();
  if (g == nullptr || s.results.size() != 1 || g->body.results.size() != 1) return std::nullopt;
  const Atom& r = g->body.results[0];
  if (!r.is_var) return std::nullopt;
  std::optional<size_t> at;
  for (size_t k = 0; k < g->body.stmts.size(); ++k) {
    const Stmt& b = g->body.stmts[k];
    if (b.as<ir::GenOp>() != nullptr && b.results.size() == 1 && b.results[0] == r.var) at = k;
  }
  if (!at) return std::nullopt;
  for (size_t k = 0; k < g->body.stmts.size(); ++k) {
    if (k == *at) continue;
    for (VarId v : stmt_uses(g->body.stmts[k])) {
      if (v == r.var) return std::nullopt;
    }
  }
  return at;
}

class Pushout : public ir::Rewriter<Pushout> {
 public:
  explicit Pushout(ir::Function& f) : Rewriter(f), f_(f) {}

  bool run() {
    changed_ = false;
    mask_unsafe(f_.body, true, unsafe_);
    rewrite();
    return changed_;
  }

  // The first guard that 5.23 would rewrite, described.
  std::optional<std::string> find(const ir::Program& program) {
    mask_unsafe(f_.body, true, unsafe_);
    const Stmt* s = ir::find_stmt(f_.body, [&](const Stmt& t) { return applies(t); });
    if (s == nullptr) return std::nullopt;
    return "the guard " + ir::print_stmt(program, f_, *s) + " yields a generator";
  }

  void on_guard(Stmt& s, ir::GuardOp& /*g*/, ir::StmtList& out) {
    rewrite_regions(s);
    if (applies(s)) {
      push_out(s, out);
      changed_ = true;
      return;
    }
    out.push_back(std::move(s));
  }

 private:
  bool applies(const Stmt& s) {
    return yielded_gen(s).has_value() && unsafe_.count(s.results[0]) == 0;
  }

  void push_out(Stmt& s, std::vector<Stmt>& out) {
    auto& guard = *s.as<ir::GuardOp>();
    const size_t at = *yielded_gen(s);
    Stmt gen_stmt = std::move(guard.body.stmts[at]);
    auto& gen = *gen_stmt.as<ir::GenOp>();
    std::vector<Stmt> pre;
    for (size_t k = 0; k < guard.body.stmts.size(); ++k) {
      if (k != at) pre.push_back(std::move(guard.body.stmts[k]));
    }
    // Statements of the guard body that the generator reads stay under an outer guard, computed
    // once; the ones it does not read are dead.
    if (!pre.empty()) {
      std::vector<VarId> used;
      ir::for_each_use(gen.body, [&](VarId v) { used.push_back(v); });
      ir::GuardOp outer;
      outer.pred = guard.pred;
      std::vector<VarId> results;
      Substitution rename;
      for (const auto& p : pre) {
        for (VarId v : p.results) {
          if (std::find(used.begin(), used.end(), v) == used.end()) continue;
          std::string name = f_.vars[static_cast<size_t>(v)].name;
          Type t = f_.vars[static_cast<size_t>(v)].type;
          VarId o = f_.new_var(std::move(name), std::move(t));
          outer.body.results.push_back(Atom::of(v));
          results.push_back(o);
          rename[v] = Atom::of(o);
        }
      }
      if (!results.empty()) {
        outer.body.stmts = std::move(pre);
        substitute_uses(gen.body, rename);
        out.push_back(Stmt{std::move(results), std::move(outer), s.span});
      }
    }
    // for i. [p] * { e }
    const Type elem = ir::atom_type(f_, gen.body.results[0]);
    const VarId y = f_.new_var("", elem);
    ir::GuardOp inner;
    inner.pred = guard.pred;
    inner.body = std::move(gen.body);
    Block body;
    body.stmts.push_back(Stmt{{y}, std::move(inner), s.span});
    body.results.push_back(Atom::of(y));
    ir::GenOp pushed;
    pushed.ivars = std::move(gen.ivars);
    pushed.body = std::move(body);
    out.push_back(Stmt{s.results, std::move(pushed), gen_stmt.span});
  }

  ir::Function& f_;
  std::unordered_set<VarId> unsafe_;
  bool changed_ = false;
};

// --- (5.22) ---------------------------------------------------------------------------------

struct GuardProducer {
  std::shared_ptr<const Stmt> stmt;
};

class GuardReads : public ir::Rewriter<GuardReads> {
 public:
  explicit GuardReads(ir::Function& f) : Rewriter(f), f_(f) {}

  bool run() {
    rewrite();
    return changed_;
  }

  void on_index(Stmt& s, ir::IndexOp& ix, ir::StmtList& out) {
    if (rewrite_read(s, ix, out)) {
      changed_ = true;
      return;
    }
    keep(s, out);
  }
  void on_guard(Stmt& s, ir::GuardOp& /*g*/, ir::StmtList& out) {
    rewrite_regions(s);
    if (is_candidate(s)) guards_[s.results[0]] = GuardProducer{std::make_shared<const Stmt>(s)};
    out.push_back(std::move(s));
  }

 private:
  bool is_candidate(const Stmt& s) const {
    const auto* g = s.as<ir::GuardOp>();
    if (g == nullptr || s.results.size() != 1 || g->body.results.size() != 1) return false;
    if (!f_.type_of(s.results[0]).is_tensor()) return false;
    for (const auto& b : g->body.stmts) {
      if (b.as<ir::LoopOp>() != nullptr) return false;
    }
    return is_cost_free(f_, g->body);
  }

  bool rewrite_read(const Stmt& s, const ir::IndexOp& ix, std::vector<Stmt>& out) {
    if (!ix.tensor.is_var || ix.indices.empty()) return false;
    auto it = guards_.find(ix.tensor.var);
    if (it == guards_.end()) return false;
    const Stmt& gs = *it->second.stmt;
    const auto& g = *gs.as<ir::GuardOp>();
    const Type& t = f_.type_of(gs.results[0]);
    for (size_t d = 0; d < ix.indices.size() && d < t.rank(); ++d) {
      if (!ix.indices[d].is_affine) return false;
      if (!scope().facts().proves_in_range(f_, ix.indices[d].affine, t.shape[d])) return false;
    }
    ir::CloneMap map;
    Block copy = ir::clone_block(f_, g.body, f_, map);
    const Atom value = copy.results[0];
    if (!value.is_var) return false;
    const VarId r =
        f_.new_var(f_.vars[static_cast<size_t>(s.results[0])].name, f_.type_of(s.results[0]));
    copy.stmts.push_back(Stmt{{r}, ir::IndexOp{value, ix.indices}, s.span});
    copy.results = {Atom::of(r)};
    ir::GuardOp read;
    read.pred = g.pred;
    read.body = std::move(copy);
    out.push_back(Stmt{s.results, std::move(read), s.span});
    return true;
  }

  ir::Function& f_;
  std::unordered_map<VarId, GuardProducer> guards_;
  bool changed_ = false;
};

constexpr int kMaxPushoutRounds = 32;

}  // namespace

PassResult push_out_generators(const ir::Program& program, const ir::Function& f) {
  (void)program;
  ir::Function out = f;
  bool any = false;
  for (int round = 0; round < kMaxPushoutRounds; ++round) {
    bool changed = Pushout(out).run();
    changed = GuardReads(out).run() || changed;
    changed = fuse_reads(out, true) || changed;  // (5.21) for cost-free generators
    if (!changed) break;
    any = true;
  }
  return {std::move(out), any};
}

std::optional<std::string> gen_pushout_postcondition(const ir::Program& program,
                                                     const ir::Function& f) {
  ir::Function copy = f;
  return Pushout(copy).find(program);
}

}  // namespace cot::opt
