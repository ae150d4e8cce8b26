#include "ir/inline_calls.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ir/clone.h"
#include "ir/uses.h"

namespace cot::ir {
namespace {

[[noreturn]] void inline_bug(const std::string& what) {
  throw std::logic_error("inline_calls: " + what);
}

// The dimension of `t` at a size variable's binding site, if the site exists.
std::optional<SizeExpr> dim_at(const Type& t, const std::vector<int>& path, int dim) {
  const Type* cur = &t;
  for (int i : path) {
    if (!cur->is_tuple || i < 0 || static_cast<size_t>(i) >= cur->elems.size()) return {};
    cur = &cur->elems[static_cast<size_t>(i)];
  }
  if (cur->is_tuple || dim < 0 || static_cast<size_t>(dim) >= cur->shape.size()) return {};
  return cur->shape[static_cast<size_t>(dim)];
}

bool has_body(const ir::Function& f) {
  return !f.body.stmts.empty() || !f.body.results.empty();
}

class Inliner {
 public:
  Inliner(const ir::Program& program, ir::Function& to, bool keep_unbuilt)
      : program_(program),
        to_(to),
        keep_unbuilt_(keep_unbuilt),
        hook_([this](const Stmt& call, const std::vector<Atom>& args, Block& out) {
          return inline_call(call, args, out);
        }) {}

  Block run(const ir::Function& from, CloneMap& map) {
    stack_.push_back(from.name);
    Block b = clone_block(from, from.body, to_, map, hook_);
    stack_.pop_back();
    return b;
  }

 private:
  std::optional<std::vector<Atom>> inline_call(const Stmt& s, const std::vector<Atom>& args,
                                               Block& out) {
    const auto& call = std::get<ir::CallOp>(s.op);
    const ir::Function* g = program_.find(call.callee);
    if (g == nullptr) inline_bug(call.callee + " is not in the program");
    if (!has_body(*g)) {
      if (keep_unbuilt_) return std::nullopt;
      inline_bug(call.callee + " has no body (a derived function not built yet)");
    }
    if (std::find(stack_.begin(), stack_.end(), g->name) != stack_.end()) {
      inline_bug(call.callee + " calls itself");
    }
    if (args.size() != g->params.size()) {
      inline_bug(call.callee + " called with " + std::to_string(args.size()) +
                 " arguments; it takes " + std::to_string(g->params.size()));
    }
    CloneMap map;
    for (size_t i = 0; i < args.size(); ++i) map.atoms[g->params[i]] = args[i];
    // The callee's size variables, as the caller's dimensions at their binding sites.
    for (const auto& sv : g->size_vars) {
      if (sv.param < 0) continue;  // dynamic: renamed when its saving loop is copied
      if (static_cast<size_t>(sv.param) >= args.size()) {
        inline_bug("size variable " + sv.name + " of " + g->name +
                   " is bound by a missing parameter");
      }
      auto d = dim_at(ir::atom_type(to_, args[static_cast<size_t>(sv.param)]), sv.path, sv.dim);
      if (!d) {
        inline_bug("size variable " + sv.name + " of " + g->name +
                   " has no matching dimension in the argument's type");
      }
      map.sizes[sv.name] = *d;
    }
    // Those read as values are bound by SizeOp statements at the call.
    std::vector<bool> used(g->vars.size(), false);
    ir::for_each_use(g->body, [&](VarId v) {
      if (v >= 0 && static_cast<size_t>(v) < used.size()) used[static_cast<size_t>(v)] = true;
    });
    for (const auto& sv : g->size_vars) {
      if (sv.param < 0 || sv.var < 0 || static_cast<size_t>(sv.var) >= used.size() ||
          !used[static_cast<size_t>(sv.var)]) {
        continue;
      }
      VarId v = to_.new_var(sv.name, Type::scalar(Scalar::I64));
      out.stmts.push_back(Stmt{{v}, ir::SizeOp{map.sizes.at(sv.name)}, s.span});
      map.atoms[sv.var] = Atom::of(v);
    }
    Block body = run(*g, map);
    for (auto& st : body.stmts) out.stmts.push_back(std::move(st));
    return std::move(body.results);
  }

  const ir::Program& program_;
  ir::Function& to_;
  bool keep_unbuilt_;
  CallHook hook_;
  std::vector<std::string> stack_;  // the functions being inlined, outermost first
};

}  // namespace

ir::Function inline_calls(const ir::Program& program, const std::string& name, bool keep_unbuilt) {
  const ir::Function* f = program.find(name);
  if (f == nullptr) inline_bug(name + " is not in the program");
  if (!has_body(*f)) inline_bug(name + " has no body (a derived function not built yet)");
  ir::Function to;
  to.name = f->name;
  to.span = f->span;
  to.param_spans = f->param_spans;
  to.result_type = f->result_type;
  to.derivation = f->derivation;
  to.from_prelude = f->from_prelude;
  CloneMap map;
  for (VarId p : f->params) {
    const auto& info = f->vars.at(static_cast<size_t>(p));
    VarId c = to.new_var(info.name, info.type);
    to.params.push_back(c);
    map.atoms[p] = Atom::of(c);
  }
  for (const auto& sv : f->size_vars) {
    if (sv.param < 0) continue;  // dynamic: created again when its saving loop is copied
    VarId c = to.new_var(f->vars.at(static_cast<size_t>(sv.var)).name, Type::scalar(Scalar::I64));
    to.size_vars.push_back(ir::SizeVar{sv.name, c, sv.param, sv.path, sv.dim});
    map.atoms[sv.var] = Atom::of(c);
  }
  Inliner inliner(program, to, keep_unbuilt);
  to.body = inliner.run(*f, map);
  return to;
}

}  // namespace cot::ir
