// Errors are values: a Diagnostic carries a span, a message and, where known, how to fix it.
// Rendering follows compilers users know:
//   file:line:col: error: message
//     <source line>
//     ^~~~
//   help: what to do
#pragma once

#include <string>
#include <vector>

#include "base/source.h"

namespace cot {

struct Diagnostic {
  Span span;
  std::string message;
  std::string help;  // empty when there is nothing useful to suggest
  // Secondary locations ("note: first defined here").
  std::vector<std::pair<Span, std::string>> notes;
};

// Renders one diagnostic with its source line and caret.
std::string render(const SourceManager& sm, const Diagnostic& d);
// Renders all of them, one after the other.
std::string render(const SourceManager& sm, const std::vector<Diagnostic>& ds);

// Collects independent errors so one run reports them all.
class DiagnosticSink {
 public:
  void error(Span span, std::string message, std::string help = {}) {
    diags_.push_back(Diagnostic{span, std::move(message), std::move(help), {}});
  }
  Diagnostic& last() { return diags_.back(); }
  void add(Diagnostic d) { diags_.push_back(std::move(d)); }
  bool has_errors() const { return !diags_.empty(); }
  size_t count() const { return diags_.size(); }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  std::vector<Diagnostic> take() { return std::move(diags_); }

 private:
  std::vector<Diagnostic> diags_;
};

}  // namespace cot
