// Helpers shared by the AD stage's tests that work on Core IR directly (clone, inline,
// checkpointing): check a source program into IR, and compare reals with ρ.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "check/checker.h"
#include "cotangent/cotangent.h"
#include "ir/ir.h"
#include "syntax/parser.h"
#include "syntax/prelude_text.h"

namespace cot::ad_test {

// ρ(x, y) = |x − y| / max(1, |x| + |y|).
inline double rho(double x, double y) {
  return std::abs(x - y) / std::max(1.0, std::abs(x) + std::abs(y));
}

// `source` loaded as a module at optimization level `opt` (0: as written, the reference; 2:
// optimized); a load error fails the test.
inline cotangent::Module load_module(const char* source, const char* name, int opt) {
  cotangent::LoadOptions o;
  o.opt_level = opt;
  auto m = cotangent::Module::from_string(source, name, o);
  EXPECT_TRUE(m.ok()) << m.message();
  return std::move(m.value());
}

// Parses and checks `src` (with the prelude, as cotangent::Module does, unless told not to);
// errors fail the test and give an empty program.
inline ir::Program compile(const std::string& src, bool with_prelude = true) {
  auto sm = std::make_shared<SourceManager>();
  const uint32_t prelude_id = sm->add("<prelude>", std::string(with_prelude ? kPreludeText : ""));
  const uint32_t user_id = sm->add("test.cot", src);
  DiagnosticSink diags;
  ast::Module prelude = parse_module(*sm, prelude_id, diags);
  ast::Module user = parse_module(*sm, user_id, diags);
  std::optional<ir::Program> p;
  if (!diags.has_errors()) p = check_program(sm, &prelude, user, diags);
  if (!p) {
    ADD_FAILURE() << "unexpected errors:\n" << render(*sm, diags.diagnostics());
    return ir::Program{};
  }
  return std::move(*p);
}

}  // namespace cot::ad_test
