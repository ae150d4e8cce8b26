#include "ad/rules.h"

#include <stdexcept>
#include <string>

#include "check/checker.h"
#include "ir/clone.h"
#include "prims/prim.h"
#include "syntax/parser.h"

namespace cot::ad {

const ir::Function& RuleBook::rule(Prim p, int k, Scalar real,
                                   const std::vector<Scalar>& operand_types) {
  auto key = std::make_tuple(p, k, real);
  auto it = compiled_.find(key);
  if (it == compiled_.end()) {
    const PrimInfo& info = prim_info(p);
    static constexpr const char* kNames[] = {"x", "y", "z"};
    std::string src = "def rule(";
    for (int i = 0; i < info.arity; ++i) {
      src += std::string(kNames[i]) + ": " + to_string(operand_types.at(static_cast<size_t>(i))) +
             ", ";
    }
    src += std::string("r: ") + to_string(real) + ") -> " + to_string(real) + " " + "{ " +
           std::string(info.partials.at(static_cast<size_t>(k))) + " }";
    auto sm = std::make_shared<SourceManager>();
    const uint32_t id = sm->add("<rule " + std::string(info.name) + ">", src);
    DiagnosticSink diags;
    ast::Module m = parse_module(*sm, id, diags);
    std::optional<ir::Program> prog;
    if (!diags.has_errors()) prog = check_program(sm, nullptr, m, diags);
    if (!prog) {
      // The table is tested (tests/prims/derivative_rules_test.cpp): this is a compiler bug.
      throw std::logic_error("derivative rule of " + std::string(info.name) +
                             " does not compile: " + src);
    }
    it = compiled_.emplace(key, std::make_shared<ir::Program>(std::move(*prog))).first;
  }
  return *it->second->find("rule");
}

ir::Atom RuleBook::partial(ir::Builder& b, Prim p, int k, const std::vector<ir::Atom>& args,
                           ir::Atom result) {
  std::vector<Scalar> types;
  for (const auto& a : args) types.push_back(b.type_of(a).elem);
  const Scalar real = b.type_of(result).elem;
  const ir::Function& fn = rule(p, k, real, types);
  ir::CloneMap map;
  for (size_t i = 0; i < args.size(); ++i) map.atoms[fn.params.at(i)] = args[i];
  map.atoms[fn.params.at(args.size())] = result;
  ir::Block body = ir::clone_block(fn, fn.body, b.function(), map);
  for (auto& s : body.stmts) b.append(std::move(s));
  return body.results.at(0);
}

}  // namespace cot::ad
