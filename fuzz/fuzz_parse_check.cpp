// libFuzzer target: any bytes, as a module beside the prelude, through parse and check (the
// front end alone; fuzz_load.cpp fuzzes the whole load). No input may crash, hang or trip a
// sanitizer; errors must come back as diagnostics, and a program the checker accepts must
// pass the IR verifier and print.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "check/checker.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "syntax/parser.h"
#include "syntax/prelude_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto sm = std::make_shared<cot::SourceManager>();
  const uint32_t prelude_id = sm->add("<prelude>", std::string(cot::kPreludeText));
  const uint32_t user_id =
      sm->add("fuzz.cot", std::string(reinterpret_cast<const char*>(data), size));
  cot::DiagnosticSink diags;
  const cot::ast::Module prelude = cot::parse_module(*sm, prelude_id, diags);
  const cot::ast::Module user = cot::parse_module(*sm, user_id, diags);
  if (diags.has_errors()) {
    (void)cot::render(*sm, diags.diagnostics());
    return 0;
  }
  const auto program = cot::check_program(sm, &prelude, user, diags);
  if (!program) {
    (void)cot::render(*sm, diags.diagnostics());
    return 0;
  }
  const auto broken = cot::ir::verify(*program);
  if (!broken.empty()) {
    // A checked program the verifier rejects is a checker bug: report it as a crash.
    std::fprintf(stderr, "verifier: %s: %s\n", broken.front().function.c_str(),
                 broken.front().message.c_str());
    std::abort();
  }
  (void)cot::ir::print_program(*program);
  return 0;
}
