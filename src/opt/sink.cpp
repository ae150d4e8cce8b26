#include "opt/sink.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/printer.h"
#include "ir/uses.h"
#include "opt/static_cost.h"

namespace cot::opt {
namespace {

using ir::Block;
using ir::Stmt;
using ir::VarId;

// Who uses a variable in one block: the top-level statements (by index; the block's results are
// index n) and whether the use is direct (an operand of the statement itself, or a result).
struct Use {
  size_t user;
  bool direct;
};
using Users = std::unordered_map<VarId, std::vector<Use>>;

Users users_of(const Block& b) {
  Users users;
  const size_t n = b.stmts.size();
  for (size_t j = 0; j < n; ++j) {
    const Stmt& s = b.stmts[j];
    ir::for_each_direct_use(s.op, [&](VarId v) { users[v].push_back(Use{j, true}); });
    for (VarId v : stmt_uses(s)) users[v].push_back(Use{j, false});
  }
  for (const auto& a : b.results) {
    if (a.is_var) users[a.var].push_back(Use{n, true});
  }
  return users;
}

bool block_uses_any(const Block& b, const std::vector<VarId>& vs) {
  bool found = false;
  ir::for_each_use(b, [&](VarId v) {
    if (std::find(vs.begin(), vs.end(), v) != vs.end()) found = true;
  });
  return found;
}

// Where statement k of b can sink: the index of the using statement and the body it sinks into,
// or nullopt.
struct Target {
  size_t user;
  Block* body;
};

std::optional<Target> sink_target(Block& b, size_t k, const Users& users) {
  const Stmt& s = b.stmts[k];
  if (s.results.empty() || s.as<ir::LoopOp>() != nullptr) return std::nullopt;
  std::optional<size_t> user;
  for (VarId r : s.results) {
    auto it = users.find(r);
    if (it == users.end()) continue;
    for (const Use& u : it->second) {
      // Direct uses include the nested ones' statement too (stmt_uses lists both), so any
      // direct use disqualifies.
      if (u.direct || u.user == b.stmts.size()) return std::nullopt;
      if (user && *user != u.user) return std::nullopt;
      user = u.user;
    }
  }
  if (!user || *user <= k) return std::nullopt;
  Stmt& u = b.stmts[*user];
  if (auto* g = u.as<ir::GuardOp>()) return Target{*user, &g->body};
  if (auto* i = u.as<ir::IfOp>()) {
    const bool in_then = block_uses_any(i->then_branch, s.results);
    const bool in_else = block_uses_any(i->else_branch, s.results);
    if (in_then && !in_else) return Target{*user, &i->then_branch};
    if (in_else && !in_then) return Target{*user, &i->else_branch};
  }
  return std::nullopt;
}

// stmt_uses lists direct uses too: keep only the users whose use is nested or direct as told.
Users normalized(const Block& b) {
  Users raw = users_of(b);
  // A statement that uses v both directly and in a region appears twice; direct wins.
  for (auto& [v, list] : raw) {
    std::vector<Use> out;
    for (const Use& u : list) {
      auto same =
          std::find_if(out.begin(), out.end(), [&](const Use& o) { return o.user == u.user; });
      if (same == out.end()) {
        out.push_back(u);
      } else {
        same->direct = same->direct || u.direct;
      }
    }
    list = std::move(out);
  }
  return raw;
}

// Returns whether a statement moved (here or in a nested block).
bool sink_block(Block& b) {
  Users users = normalized(b);
  bool changed = false;
  std::vector<bool> moved(b.stmts.size(), false);
  for (size_t k = b.stmts.size(); k-- > 0;) {
    auto target = sink_target(b, k, users);
    if (!target) continue;
    Stmt s = std::move(b.stmts[k]);
    moved[k] = true;
    changed = true;
    // Before the first statement of the body that uses it.
    std::vector<Stmt>& body = target->body->stmts;
    size_t at = body.size();
    for (size_t j = 0; j < body.size(); ++j) {
      bool uses = false;
      for (VarId v : stmt_uses(body[j])) {
        if (std::find(s.results.begin(), s.results.end(), v) != s.results.end()) uses = true;
      }
      if (uses) {
        at = j;
        break;
      }
    }
    // Its operands are now used (nested) by the target statement.
    for (VarId v : stmt_uses(s)) {
      auto& list = users[v];
      list.erase(
          std::remove_if(list.begin(), list.end(), [&](const Use& u) { return u.user == k; }),
          list.end());
      if (std::none_of(list.begin(), list.end(),
                       [&](const Use& u) { return u.user == target->user; })) {
        list.push_back(Use{target->user, false});
      }
    }
    body.insert(body.begin() + static_cast<ptrdiff_t>(at), std::move(s));
  }
  std::vector<Stmt> keep;
  keep.reserve(b.stmts.size());
  for (size_t k = 0; k < b.stmts.size(); ++k) {
    if (!moved[k]) keep.push_back(std::move(b.stmts[k]));
  }
  b.stmts = std::move(keep);
  for (auto& s : b.stmts) {
    ir::for_each_region(s, [&](Block& body) { changed = sink_block(body) || changed; });
  }
  return changed;
}

std::optional<std::string> check_block(const ir::Program& program, const ir::Function& f,
                                       Block& b) {
  Users users = normalized(b);
  for (size_t k = 0; k < b.stmts.size(); ++k) {
    if (auto t = sink_target(b, k, users)) {
      return "the statement " + ir::print_stmt(program, f, b.stmts[k]) +
             " is used only inside the region of " + ir::print_stmt(program, f, b.stmts[t->user]);
    }
  }
  std::optional<std::string> found;
  for (auto& s : b.stmts) {
    ir::for_each_region(s, [&](Block& body) {
      if (!found) found = check_block(program, f, body);
    });
  }
  return found;
}

}  // namespace

PassResult sink_into_guards(const ir::Program& program, const ir::Function& f) {
  (void)program;
  ir::Function out = f;
  const bool changed = sink_block(out.body);
  return {std::move(out), changed};
}

std::optional<std::string> sink_postcondition(const ir::Program& program, const ir::Function& f) {
  ir::Function copy = f;
  return check_block(program, copy, copy.body);
}

}  // namespace cot::opt
