// Helpers for the interpreter tests: Core IR is built by hand with ir::Builder (the checker is
// tested separately), values are made from initializer lists, and results are unpacked with
// test failures instead of crashes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include "cotangent/value.h"
#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace cot::interp::testing {

using cotangent::DType;
using cotangent::Value;
using ir::Atom;
using ir::VarId;

inline SizeExpr sv(const char* name) {
  return SizeExpr::var(name);
}
inline SizeExpr sc(int64_t c) {
  return SizeExpr::constant(c);
}
inline Type f64t(std::vector<SizeExpr> shape = {}) {
  return Type::tensor(Scalar::F64, std::move(shape));
}
inline Type f32t(std::vector<SizeExpr> shape = {}) {
  return Type::tensor(Scalar::F32, std::move(shape));
}
inline Type i64t(std::vector<SizeExpr> shape = {}) {
  return Type::tensor(Scalar::I64, std::move(shape));
}
inline Type boolt() {
  return Type::scalar(Scalar::Bool);
}

inline Atom var(VarId v) {
  return Atom::of(v);
}
inline Atom real(double x) {
  return Atom::real(x);
}
inline Atom i64(int64_t x) {
  return Atom::i64(x);
}

// Index expressions: v + c (affine), or a computed atom.
inline ir::IndexExpr at(VarId v, int64_t c = 0) {
  return ir::affine_index(*Affine::add(Affine::var(v), Affine::constant(c)));
}
inline ir::IndexExpr at_const(int64_t c) {
  return ir::affine_index(Affine::constant(c));
}
inline ir::IndexExpr at_atom(Atom a) {
  return ir::computed_index(a);
}
inline Pred cmp(const Affine& a, const char* op, const Affine& b) {
  return *Pred::compare(a, op, b);
}
inline Affine av(VarId v) {
  return Affine::var(v);
}
inline Affine ac(int64_t c) {
  return Affine::constant(c);
}

// Distinct fake spans, so tests can tell which construct an error points at.
inline Span span(uint32_t k) {
  return Span{1, k * 10, k * 10 + 5};
}

inline Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}
inline Value fvec(const std::vector<float>& xs) {
  Value v = Value::zeros(DType::F32, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f32_mut().begin());
  return v;
}
inline Value ivec(const std::vector<int64_t>& xs) {
  Value v = Value::zeros(DType::I64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.i64_mut().begin());
  return v;
}
inline Value mat(int64_t rows, int64_t cols, const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {rows, cols});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}
inline std::vector<double> elems(const Value& v) {
  auto d = v.f64_data();
  return std::vector<double>(d.begin(), d.end());
}
inline std::vector<int64_t> ielems(const Value& v) {
  auto d = v.i64_data();
  return std::vector<int64_t>(d.begin(), d.end());
}

// ρ(x, y) = |x - y| / max(1, |x| + |y|).
inline double rho(double x, double y) {
  return std::fabs(x - y) / std::max(1.0, std::fabs(x) + std::fabs(y));
}

// Builds one function with `build(builder)` returning its result atom.
template <class F>
ir::Function make_function(const std::string& name, F&& build) {
  ir::Function f;
  f.name = name;
  f.span = span(99);
  ir::Builder b(f);
  Atom r = build(b);
  b.finish({r});
  return f;
}

inline ir::Program program_of(std::vector<ir::Function> fs) {
  ir::Program p;
  p.functions = std::move(fs);
  return p;
}

struct Outcome {
  std::variant<Value, Diagnostic> result;
  CostCounts cost;

  bool ok() const { return result.index() == 0; }
  const Value& value() const {
    static const Value kNone;
    if (!ok()) {
      ADD_FAILURE() << "evaluation failed: " << std::get<1>(result).message;
      return kNone;
    }
    return std::get<0>(result);
  }
  Diagnostic error() const {
    if (ok()) {
      ADD_FAILURE() << "evaluation succeeded with " << std::get<0>(result).type_string();
      return {};
    }
    return std::get<1>(result);
  }
};

inline Outcome run(const ir::Program& p, const std::string& fn, const std::vector<Value>& args,
                   const Options& options = {}) {
  Outcome o{Value(), {}};
  o.result = evaluate(p, fn, args, &o.cost, options);
  return o;
}
inline Outcome run(const ir::Function& f, const std::vector<Value>& args,
                   const Options& options = {}) {
  return run(program_of({f}), f.name, args, options);
}

inline bool same_span(Span a, Span b) {
  return a.file == b.file && a.begin == b.begin && a.end == b.end;
}

}  // namespace cot::interp::testing
