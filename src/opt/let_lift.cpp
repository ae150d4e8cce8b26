#include "opt/let_lift.h"

#include <utility>
#include <vector>

#include "ir/printer.h"
#include "ir/regions.h"
#include "opt/loop_fission.h"

namespace cot::opt {
namespace {

// A body that only builds and yields one inner statement, possibly under a sole guard:
// {u = INNER; yield u} or {g = guard p { u = INNER; yield u }; yield g}.
struct Nested {
  ir::Stmt* guard = nullptr;
  ir::Stmt* inner = nullptr;
};

ir::Stmt* sole_stmt(ir::Block& b) {
  if (b.stmts.size() != 1 || b.results.size() != 1) return nullptr;
  ir::Stmt& s = b.stmts.front();
  if (s.results.size() != 1 || !b.results[0].is_var || b.results[0].var != s.results[0]) {
    return nullptr;
  }
  return &s;
}

Nested nested(ir::Block& body) {
  Nested n;
  ir::Stmt* s = sole_stmt(body);
  if (s == nullptr) return n;
  if (auto* g = s->as<ir::GuardOp>()) {
    ir::Stmt* inner = sole_stmt(g->body);
    if (inner == nullptr) return n;
    n.guard = s;
    n.inner = inner;
    return n;
  }
  n.inner = s;
  return n;
}

bool is_real_scalar(const ir::Function& f, ir::VarId v) {
  const Type& t = f.type_of(v);
  return t.is_scalar() && is_real(t.elem);
}

// The gen `s` flattens with the gen its body yields.
bool gen_of_gen(ir::Stmt& s, Nested& n) {
  auto* g = s.as<ir::GenOp>();
  if (g == nullptr) return false;
  n = nested(g->body);
  return n.inner != nullptr && n.inner->as<ir::GenOp>() != nullptr;
}

// The scalar real sum `s` flattens with the scalar sum its body yields.
bool sum_of_sum(const ir::Function& f, ir::Stmt& s, Nested& n) {
  auto* r = s.as<ir::ReduceOp>();
  if (r == nullptr || r->kind != ir::ReduceKind::Sum || !is_real_scalar(f, s.results[0])) {
    return false;
  }
  n = nested(r->body);
  if (n.inner == nullptr) return false;
  auto* inner = n.inner->as<ir::ReduceOp>();
  return inner != nullptr && inner->kind == ir::ReduceKind::Sum &&
         is_real_scalar(f, n.inner->results[0]);
}

class LetLift {
 public:
  explicit LetLift(ir::Function& f) : f_(f) {}

  // Whether a binder was flattened.
  bool changed() const { return changed_; }

  void block(ir::Block& b) {
    for (auto& s : b.stmts) {
      ir::for_each_region(s, [&](ir::Block& r) { block(r); });
      flatten(s);
    }
  }

 private:
  void flatten(ir::Stmt& s) {
    Nested n;
    if (gen_of_gen(s, n)) {
      auto& outer = std::get<ir::GenOp>(s.op);
      auto& inner = std::get<ir::GenOp>(n.inner->op);
      lift(outer.ivars, outer.body, inner.ivars, inner.body, n, /*same_type_guard=*/false);
      flatten(s);  // the inner body may itself have been a (guarded) gen: already flat, but cheap
    } else if (sum_of_sum(f_, s, n)) {
      auto& outer = std::get<ir::ReduceOp>(s.op);
      auto& inner = std::get<ir::ReduceOp>(n.inner->op);
      lift(outer.ivars, outer.body, inner.ivars, inner.body, n, /*same_type_guard=*/true);
      flatten(s);
    }
  }

  // outer_ivars ++= inner_ivars; the outer body becomes the inner body, under the guard when
  // there is one. The guard's result variable is kept when its type does not change (scalar
  // sums), else a fresh one of the element type is made.
  void lift(std::vector<ir::IndexVar>& outer_ivars, ir::Block& outer_body,
            std::vector<ir::IndexVar>& inner_ivars, ir::Block& inner_body, const Nested& n,
            bool same_type_guard) {
    changed_ = true;
    std::vector<ir::IndexVar> extra = std::move(inner_ivars);
    ir::Block body = std::move(inner_body);
    if (n.guard != nullptr) {
      ir::Stmt guard = std::move(*n.guard);
      auto& gop = std::get<ir::GuardOp>(guard.op);
      Type elem = ir::atom_type(f_, body.results[0]);
      gop.body = std::move(body);
      if (!same_type_guard) {
        const std::string hint = f_.vars[static_cast<size_t>(guard.results[0])].name;
        guard.results[0] = f_.new_var(hint, std::move(elem));
      }
      body = ir::Block{};
      body.results.push_back(ir::Atom::of(guard.results[0]));
      body.stmts.push_back(std::move(guard));
    }
    outer_ivars.insert(outer_ivars.end(), extra.begin(), extra.end());
    outer_body = std::move(body);
  }

  ir::Function& f_;
  bool changed_ = false;
};

const ir::Stmt* first_nested(const ir::Function& f, ir::Block& b) {
  for (auto& s : b.stmts) {
    Nested n;
    if (gen_of_gen(s, n) || sum_of_sum(f, s, n)) return &s;
    const ir::Stmt* found = nullptr;
    ir::for_each_region(s, [&](ir::Block& r) {
      if (found == nullptr) found = first_nested(f, r);
    });
    if (found != nullptr) return found;
  }
  return nullptr;
}

}  // namespace

PassResult let_lift(const ir::Program& program, const ir::Function& f) {
  ir::Function g = f;
  bool changed = false;
  // Flattening first: a chain in `sum i. sum j. e` that depends on i only is one in
  // `sum i, j. e` that does not depend on j. A hoisted generator may nest one (for i. for j. e),
  // so both run again until fission changes nothing.
  for (int round = 0; round < 8; ++round) {
    LetLift lift(g);
    lift.block(g.body);
    changed = changed || lift.changed();
    auto fissioned = loop_fission(program, g);  // nullopt: nothing to fission
    if (!fissioned) break;
    g = std::move(*fissioned);
    changed = true;
  }
  return {std::move(g), changed};
}

std::optional<std::string> let_lift_postcondition(const ir::Program& program,
                                                  const ir::Function& f) {
  ir::Function g = f;  // the matcher takes mutable blocks; nothing is changed
  if (const ir::Stmt* s = first_nested(g, g.body)) {
    return "the binder `" + ir::print_stmt(program, g, *s) + "` still nests an inner one";
  }
  return loop_fission_candidate(program, f);
}

}  // namespace cot::opt
