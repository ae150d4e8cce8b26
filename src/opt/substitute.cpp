#include "opt/substitute.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "ir/match.h"
#include "ir/regions.h"

namespace cot::opt {
namespace {

[[noreturn]] void bug(const std::string& what) {
  throw std::logic_error("substitute_uses: " + what);
}

void on_atom(ir::Atom& a, const Substitution& map) {
  if (!a.is_var) return;
  auto it = map.find(a.var);
  if (it != map.end()) a = it->second;
}

Affine on_affine(const Affine& a, const Substitution& map) {
  Affine out = a;
  for (const auto& [v, c] : a.terms()) {
    auto it = map.find(v);
    if (it == map.end()) continue;
    const ir::Atom& by = it->second;
    std::optional<Affine> next;
    if (by.is_var) {
      next = out.substitute(v, Affine::var(by.var));
    } else if (by.lit.type == Scalar::I64) {
      next = out.substitute(v, Affine::constant(by.lit.integer));
    } else {
      bug("a non-integer literal in an affine position");
    }
    if (!next) bug("integer overflow while folding a literal into an affine expression");
    out = *next;
  }
  return out;
}

void on_index(ir::IndexExpr& ix, const Substitution& map) {
  if (ix.is_affine) {
    ix.affine = on_affine(ix.affine, map);
  } else {
    on_atom(ix.computed, map);
  }
}

void on_block(ir::Block& b, const Substitution& map);

void on_stmt(ir::Stmt& s, const Substitution& map) {
  auto atoms = [&](std::vector<ir::Atom>& as) {
    for (auto& a : as) on_atom(a, map);
  };
  auto regions = [&] { ir::for_each_region(s, [&](ir::Block& b) { on_block(b, map); }); };
  ir::match(
      s.op, [&](ir::PrimOp& o) { atoms(o.args); }, [&](ir::CallOp& o) { atoms(o.args); },
      [&](ir::IndexOp& o) {
        on_atom(o.tensor, map);
        for (auto& ix : o.indices) on_index(ix, map);
      },
      [&](ir::GenOp& /*o*/) { regions(); }, [&](ir::ReduceOp& /*o*/) { regions(); },
      [&](ir::AccumOp& /*o*/) { regions(); },
      [&](ir::GuardOp& o) {
        o.pred = substitute_pred(o.pred, map);
        regions();
      },
      [&](ir::LoopOp& o) {
        atoms(o.init);
        if (!o.is_while) on_atom(o.count, map);
        regions();
      },
      [&](ir::IfOp& o) {
        on_atom(o.cond, map);
        regions();
      },
      [&](ir::TupleOp& o) { atoms(o.elems); }, [&](ir::ProjOp& o) { on_atom(o.tuple, map); },
      // A size read names size variables, not variables.
      [&](ir::SizeOp& /*o*/) {});
}

void on_block(ir::Block& b, const Substitution& map) {
  for (auto& s : b.stmts) on_stmt(s, map);
  for (auto& a : b.results) on_atom(a, map);
}

}  // namespace

Pred substitute_pred(const Pred& p, const Substitution& map) {
  switch (p.kind) {
    case Pred::Kind::True:
    case Pred::Kind::False:
      return p;
    case Pred::Kind::Ge0:
      return Pred::ge0(on_affine(p.expr, map));
    case Pred::Kind::Eq0:
      return Pred::eq0(on_affine(p.expr, map));
    case Pred::Kind::Atom: {
      auto it = map.find(p.atom);
      if (it == map.end()) return p;
      const ir::Atom& by = it->second;
      if (by.is_var) return Pred::atom_of(by.var, p.negated);
      if (by.lit.type != Scalar::Bool) bug("a non-boolean literal in a predicate");
      return by.lit.boolean != p.negated ? Pred::truth() : Pred::falsity();
    }
    case Pred::Kind::And:
    case Pred::Kind::Or: {
      std::vector<Pred> kids;
      kids.reserve(p.kids.size());
      for (const auto& k : p.kids) kids.push_back(substitute_pred(k, map));
      return p.kind == Pred::Kind::And ? Pred::conj(std::move(kids)) : Pred::disj(std::move(kids));
    }
  }
  return p;
}

void map_direct_operands(ir::Op& op, const std::function<ir::Atom(const ir::Atom&)>& f) {
  auto atoms = [&](std::vector<ir::Atom>& as) {
    for (auto& a : as) a = f(a);
  };
  // Generators, reductions, scatter-adds and guards read their operands inside their regions
  // (or in index expressions and predicates, which are not atoms); size reads read none.
  auto none = [](const auto& /*op*/) {};
  ir::match(
      op, [&](ir::PrimOp& o) { atoms(o.args); }, [&](ir::CallOp& o) { atoms(o.args); },
      [&](ir::TupleOp& o) { atoms(o.elems); }, [&](ir::ProjOp& o) { o.tuple = f(o.tuple); },
      [&](ir::IfOp& o) { o.cond = f(o.cond); },
      [&](ir::IndexOp& o) {
        o.tensor = f(o.tensor);
        for (auto& ix : o.indices) {
          if (!ix.is_affine) ix.computed = f(ix.computed);
        }
      },
      [&](ir::LoopOp& o) {
        atoms(o.init);
        o.count = f(o.count);
      },
      [&](ir::GenOp& o) { none(o); }, [&](ir::ReduceOp& o) { none(o); },
      [&](ir::AccumOp& o) { none(o); }, [&](ir::GuardOp& o) { none(o); },
      [&](ir::SizeOp& o) { none(o); });
}

void substitute_uses(ir::Block& block, const Substitution& map) {
  if (map.empty()) return;
  on_block(block, map);
}

void substitute_uses(ir::Stmt& stmt, const Substitution& map) {
  if (map.empty()) return;
  ir::Block one;
  one.stmts.push_back(std::move(stmt));
  substitute_uses(one, map);
  stmt = std::move(one.stmts.front());
}

void substitute_results(ir::Block& block, const Substitution& map) {
  ir::Block results_only;
  results_only.results = std::move(block.results);
  substitute_uses(results_only, map);
  block.results = std::move(results_only.results);
}

}  // namespace cot::opt
