// What a module optimizes and differentiates, and when: a function and what it needs the first
// time a caller asks for it, not every function at load (docs/design.md §15, "Preparing on
// demand"). A module of twenty models that runs one pays for one.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "ad/derive.h"
#include "api/internal.h"
#include "ir/printer.h"
#include "ir/uses.h"
#include "opt/pipeline.h"

namespace cotangent {

namespace {

// A pass that broke the IR: a bug of the compiler, reported as such with the pass's name.
Error optimizer_error(const cot::opt::PipelineError& failed) {
  Error e;
  e.message = "internal compiler error in the optimizer pass `" + failed.pass + "` on " +
              failed.function + ": " + failed.message;
  e.help = "please report this with the program; --opt=0 runs it unoptimized";
  e.rendered = "error: " + e.message + "\n  help: " + e.help + "\n";
  return e;
}

bool is_user_function(const cot::ir::Function& f) {
  return !f.from_prelude;
}

}  // namespace

std::set<std::string> needed_functions(const cot::ir::Program& program,
                                       const std::vector<std::string>& roots) {
  std::set<std::string> seen;
  std::vector<std::string> work(roots.begin(), roots.end());
  while (!work.empty()) {
    std::string name = std::move(work.back());
    work.pop_back();
    const cot::ir::Function* f = program.find(name);
    if (f == nullptr || !seen.insert(name).second) continue;
    cot::ir::for_each_call(f->body, [&](const std::string& c) { work.push_back(c); });
    if (f->derivation) work.push_back(f->derivation->base);
  }
  return seen;
}

Error derive_error(const std::string& file, const std::string& fn,
                   const cot::ad::DeriveError& failed) {
  Error e;
  e.file = file;
  e.message = failed.internal
                  ? "internal compiler error while differentiating " + fn + ": " + failed.message
                  : "cannot differentiate " + fn + ": " + failed.message;
  e.help = failed.internal ? "please report this with the program that caused it"
                           : "apply the derivative operator to a function without it";
  e.rendered = e.file + ": error: " + e.message + "\n  help: " + e.help + "\n";
  return e;
}

void optimize(cot::ir::Program& program, const LoadOptions& options,
              const std::function<bool(const cot::ir::Function&)>& select,
              std::map<std::string, Error>& broken) {
  cot::opt::PipelineOptions po;
  po.level = options.opt_level;
  po.dump_after = options.dump_after;
  // Checking mode, for the optimizer's developers (docs/design.md §8): each pass's report of
  // whether it changed a function is compared with the function's printed form, and the
  // postconditions that repeat a pass's search run too.
  const char* check = std::getenv("COTANGENT_CHECK_PASSES");
  const bool checking = check != nullptr && *check != '\0' && std::string(check) != "0";
  po.check_change_reports = checking;
  po.check_costly_postconditions = checking;
  if (options.dump) {
    po.dump = [&](std::string_view pass, const cot::ir::Program& p, const cot::ir::Function& f) {
      options.dump(std::string(pass), f.name, cot::ir::print_function(p, f));
    };
  }
  auto r = cot::opt::optimize_each(std::move(program), po, select);
  for (const auto& failed : r.failed) broken.emplace(failed.function, optimizer_error(failed));
  program = std::move(r.program);
}

void spread_breakage(const cot::ir::Program& program, std::map<std::string, Error>& broken) {
  for (bool changed = !broken.empty(); changed;) {
    changed = false;
    for (const auto& f : program.functions) {
      if (broken.count(f.name) != 0) continue;
      std::vector<std::string> needs;
      cot::ir::for_each_call(f.body, [&](const std::string& c) { needs.push_back(c); });
      if (f.derivation) needs.push_back(f.derivation->base);
      for (const auto& n : needs) {
        auto it = broken.find(n);
        if (it == broken.end()) continue;
        broken.emplace(f.name, it->second);
        changed = true;
        break;
      }
    }
  }
}

Module::Impl::Impl(std::shared_ptr<cot::SourceManager> sources_, std::string file_,
                   cot::ir::Program checked, LoadOptions options_)
    : sources(std::move(sources_)),
      file(std::move(file_)),
      options(std::move(options_)),
      current_{std::make_shared<const cot::ir::Program>(std::move(checked)), {}} {}

Prepared Module::Impl::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

Prepared Module::Impl::prepare_all() const {
  std::vector<std::string> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& f : current_.program->functions) {
      if (is_user_function(f)) all.push_back(f.name);
    }
  }
  return prepare(all);
}

// The primal functions are optimized before they are differentiated (derived functions have no
// body yet, so calls of them stay), and the derivatives after, with the functions that call
// them. A function that fails to build (a compiler bug, or a limitation of AD) breaks only the
// functions that need it. Each round works on a copy and publishes it: the snapshots handed
// out before never change.
Prepared Module::Impl::prepare(const std::vector<std::string>& roots) const {
  std::lock_guard<std::mutex> lock(mutex_);
  // A prepared function's needs were prepared with it: every later call (each evaluate) stops
  // here, without walking its body again.
  if (std::all_of(roots.begin(), roots.end(),
                  [&](const std::string& r) { return prepared_.count(r) != 0; })) {
    return current_;
  }
  std::set<std::string> needed = needed_functions(*current_.program, roots);
  std::erase_if(needed, [&](const std::string& n) { return prepared_.count(n) != 0; });
  if (needed.empty()) return current_;
  cot::ir::Program program = *current_.program;
  std::map<std::string, Error> broken = current_.broken;
  optimize(
      program, options,
      [&](const cot::ir::Function& f) {
        return is_user_function(f) && !f.derivation && needed.count(f.name) != 0;
      },
      broken);
  std::set<std::string> unbuilt;
  for (const auto& f : program.functions) {
    if (f.derivation && needed.count(f.name) != 0 && broken.count(f.name) == 0) {
      unbuilt.insert(f.name);
    }
  }
  for (const auto& [fn, failed] : cot::ad::build_each_derivative(program, {}, unbuilt)) {
    broken.emplace(fn, derive_error(file, fn, failed));
  }
  spread_breakage(program, broken);
  // With what the derivatives call (helpers the AD stage added: the vjp a jacobian uses).
  std::set<std::string> with_helpers =
      needed_functions(program, std::vector<std::string>(needed.begin(), needed.end()));
  std::erase_if(with_helpers, [&](const std::string& n) { return prepared_.count(n) != 0; });
  optimize(
      program, options,
      [&](const cot::ir::Function& f) {
        return is_user_function(f) && broken.count(f.name) == 0 && with_helpers.count(f.name) != 0;
      },
      broken);
  spread_breakage(program, broken);
  prepared_.insert(with_helpers.begin(), with_helpers.end());
  current_ =
      Prepared{std::make_shared<const cot::ir::Program>(std::move(program)), std::move(broken)};
  return current_;
}

}  // namespace cotangent
