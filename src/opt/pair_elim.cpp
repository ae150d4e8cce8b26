#include "opt/pair_elim.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/printer.h"
#include "ir/rewriter.h"
#include "opt/alpha_equal.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

using ir::VarId;

void collect_projected(const ir::Block& b, std::unordered_set<VarId>& out) {
  for (const auto& s : b.stmts) {
    if (const auto* p = s.as<ir::ProjOp>(); p != nullptr && p->tuple.is_var) {
      out.insert(p->tuple.var);
    }
    for_each_region(s, [&](const ir::Block& r) { collect_projected(r, out); });
  }
}

// Replaces each projection of a tuple built in scope by the element it projects, and splits
// the projected tuple results of guards and ifs into their elements so that the projections
// after them go too.
class PairElim : public ir::Rewriter<PairElim> {
 public:
  explicit PairElim(ir::Function& f) : Rewriter(f), f_(f) { collect_projected(f.body, projected_); }

  // Whether a projection was dropped or a result split (the renaming follows from those).
  bool changed() const { return changed_; }

  void visit(ir::Stmt& s, ir::StmtList& out) {
    substitute_uses(s, subst_);
    Rewriter::visit(s, out);
  }

  void on_proj(ir::Stmt& s, ir::ProjOp& p, ir::StmtList& out) {
    if (p.tuple.is_var) {
      auto it = tuples_.find(p.tuple.var);
      if (it != tuples_.end()) {
        subst_[s.results[0]] = it->second.at(static_cast<size_t>(p.index));
        changed_ = true;
        return;
      }
    }
    keep(s, out);
  }
  void on_tuple(ir::Stmt& s, ir::TupleOp& t, ir::StmtList& out) {
    tuples_[s.results[0]] = t.elems;
    keep(s, out);
  }
  void on_guard(ir::Stmt& s, ir::GuardOp& /*g*/, ir::StmtList& out) { split_and_keep(s, out); }
  void on_if(ir::Stmt& s, ir::IfOp& /*i*/, ir::StmtList& out) { split_and_keep(s, out); }

  void after_block(ir::Block& b) { substitute_results(b, subst_); }

 private:
  void split_and_keep(ir::Stmt& s, ir::StmtList& out) {
    std::vector<ir::Stmt> rebuilt;
    split(s, rebuilt);
    keep(s, out);
    for (auto& r : rebuilt) {
      tuples_[r.results[0]] = std::get<ir::TupleOp>(r.op).elems;
      out.push_back(std::move(r));
    }
  }

  // Splits every projected tuple-typed result of a guard or if into its elements; `rebuilt`
  // gets the statements that rebuild the tuples after it.
  void split(ir::Stmt& s, std::vector<ir::Stmt>& rebuilt) {
    std::vector<ir::Block*> bodies;
    if (auto* g = s.as<ir::GuardOp>()) {
      bodies = {&g->body};
    } else {
      auto& i = std::get<ir::IfOp>(s.op);
      bodies = {&i.then_branch, &i.else_branch};
    }
    std::vector<VarId> results;
    std::vector<std::vector<ir::Atom>> yields(bodies.size());
    for (size_t r = 0; r < s.results.size(); ++r) {
      const VarId v = s.results[r];
      const Type type = f_.type_of(v);
      if (!type.is_tuple || projected_.count(v) == 0) {
        results.push_back(v);
        for (size_t b = 0; b < bodies.size(); ++b) yields[b].push_back(bodies[b]->results[r]);
        continue;
      }
      const std::string name = f_.vars[static_cast<size_t>(v)].name;
      ir::TupleOp whole;
      for (size_t k = 0; k < type.elems.size(); ++k) {
        const VarId leaf = f_.new_var(name, type.elems[k]);
        results.push_back(leaf);
        whole.elems.push_back(ir::Atom::of(leaf));
        for (size_t b = 0; b < bodies.size(); ++b) {
          const VarId p = f_.new_var(name, type.elems[k]);
          bodies[b]->stmts.push_back(
              ir::Stmt{{p}, ir::ProjOp{bodies[b]->results[r], static_cast<int>(k)}, s.span});
          yields[b].push_back(ir::Atom::of(p));
          projected_.insert(p);
        }
      }
      rebuilt.push_back(ir::Stmt{{v}, std::move(whole), s.span});
    }
    if (rebuilt.empty()) return;
    changed_ = true;
    s.results = std::move(results);
    for (size_t b = 0; b < bodies.size(); ++b) bodies[b]->results = std::move(yields[b]);
  }

  ir::Function& f_;
  Substitution subst_;
  std::unordered_map<VarId, std::vector<ir::Atom>> tuples_;
  std::unordered_set<VarId> projected_;
  bool changed_ = false;
};

const ir::Stmt* first_proj_of_tuple(const ir::Block& b, const std::unordered_set<VarId>& tuples) {
  return ir::find_stmt(b, [&](const ir::Stmt& s) {
    const auto* p = s.as<ir::ProjOp>();
    return p != nullptr && p->tuple.is_var && tuples.count(p->tuple.var) > 0;
  });
}

void collect_tuples(const ir::Block& b, std::unordered_set<VarId>& out) {
  ir::for_each_stmt(b, [&](const ir::Stmt& s) {
    if (s.as<ir::TupleOp>() != nullptr) out.insert(s.results[0]);
  });
}

}  // namespace

PassResult eliminate_pairs(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  PairElim elim(g);
  elim.rewrite();
  const bool changed = elim.changed();
  return {std::move(g), changed};
}

std::optional<std::string> pair_elim_postcondition(const ir::Program& program,
                                                   const ir::Function& f) {
  std::unordered_set<VarId> tuples;
  collect_tuples(f.body, tuples);
  const ir::Stmt* s = first_proj_of_tuple(f.body, tuples);
  if (s == nullptr) return std::nullopt;
  return "the projection `" + ir::print_stmt(program, f, *s) + "` reads a tuple built here";
}

}  // namespace cot::opt
