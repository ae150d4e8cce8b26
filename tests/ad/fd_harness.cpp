#include "ad/fd_harness.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>

namespace cotangent::adtest {

double rho(double x, double y) {
  return std::fabs(x - y) / std::max(1.0, std::fabs(x) + std::fabs(y));
}

bool is_real(DType t) {
  return t == DType::F64 || t == DType::F32;
}

bool kind_is_real(const ValueKind& k) {
  if (!k.is_tuple) return is_real(k.dtype);
  for (const ValueKind& e : k.elems) {
    if (!kind_is_real(e)) return false;
  }
  return !k.elems.empty();
}

int64_t real_count(const Value& v) {
  if (v.is_tuple()) {
    int64_t n = 0;
    for (const Value& e : v.elems()) n += real_count(e);
    return n;
  }
  return is_real(v.dtype()) ? v.numel() : 0;
}

namespace {

void collect(const Value& v, std::vector<double>& out) {
  if (v.is_tuple()) {
    for (const Value& e : v.elems()) collect(e, out);
    return;
  }
  if (v.dtype() == DType::F64) {
    for (double x : v.f64_data()) out.push_back(x);
  } else if (v.dtype() == DType::F32) {
    for (float x : v.f32_data()) out.push_back(static_cast<double>(x));
  }
}

}  // namespace

std::vector<double> real_elements(const Value& v) {
  std::vector<double> out;
  collect(v, out);
  return out;
}

Value with_real_elements(const Value& like, const std::vector<double>& xs, size_t* pos) {
  if (like.is_tuple()) {
    std::vector<Value> elems;
    for (const Value& e : like.elems()) elems.push_back(with_real_elements(e, xs, pos));
    return Value::tuple(std::move(elems));
  }
  if (!is_real(like.dtype())) return like;
  Value out = Value::zeros(like.dtype(), like.shape());
  const int64_t n = like.numel();
  for (int64_t k = 0; k < n; ++k) {
    const double x = *pos < xs.size() ? xs[*pos] : 0.0;
    ++*pos;
    if (like.dtype() == DType::F64) {
      out.f64_mut()[static_cast<size_t>(k)] = x;
    } else {
      out.f32_mut()[static_cast<size_t>(k)] = static_cast<float>(x);
    }
  }
  return out;
}

Value with_real_elements(const Value& like, const std::vector<double>& xs) {
  size_t pos = 0;
  return with_real_elements(like, xs, &pos);
}

Value f64_tensor(std::vector<int64_t> shape, const std::vector<double>& data) {
  Value v = Value::zeros(DType::F64, std::move(shape));
  auto out = v.f64_mut();
  for (size_t k = 0; k < out.size() && k < data.size(); ++k) out[k] = data[k];
  return v;
}

Value f64_vector(const std::vector<double>& data) {
  return f64_tensor({static_cast<int64_t>(data.size())}, data);
}

Value f64_matrix(const std::vector<std::vector<double>>& rows) {
  std::vector<double> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  const int64_t m = static_cast<int64_t>(rows.size());
  const int64_t n = rows.empty() ? 0 : static_cast<int64_t>(rows[0].size());
  return f64_tensor({m, n}, flat);
}

Value f32_vector(const std::vector<double>& data) {
  Value v = Value::zeros(DType::F32, {static_cast<int64_t>(data.size())});
  for (size_t k = 0; k < data.size(); ++k) v.f32_mut()[k] = static_cast<float>(data[k]);
  return v;
}

Value i64_vector(const std::vector<int64_t>& data) {
  Value v = Value::zeros(DType::I64, {static_cast<int64_t>(data.size())});
  for (size_t k = 0; k < data.size(); ++k) v.i64_mut()[k] = data[k];
  return v;
}

std::vector<double> random_reals(size_t n, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> out(n);
  for (double& x : out) x = u(rng);
  return out;
}

Value random_like(const Value& like, std::mt19937_64& rng, double lo, double hi) {
  return with_real_elements(like, random_reals(static_cast<size_t>(real_count(like)), rng, lo, hi));
}

// ---------------------------------------------------------------------------------------------
// Types.

bool TypeSpec::all_real() const {
  if (!is_tuple) return is_real(dtype);
  for (const TypeSpec& e : elems) {
    if (!e.all_real()) return false;
  }
  return !elems.empty();
}

std::string TypeSpec::to_string() const {
  if (is_tuple) {
    std::string s = "(";
    for (size_t i = 0; i < elems.size(); ++i) s += (i ? ", " : "") + elems[i].to_string();
    return s + ")";
  }
  std::string s = dtype_name(dtype);
  if (dims.empty()) return s;
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i];
  return s + "]";
}

namespace {

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

// Splits at commas of depth 0 (brackets and parentheses).
std::vector<std::string> split_top(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(trim(s.substr(start)));
  return out;
}

bool parse_type_impl(std::string s, TypeSpec* out, std::string* why) {
  s = trim(s);
  if (s.empty()) {
    if (why) *why = "empty type";
    return false;
  }
  if (s.front() == '(') {
    if (s.back() != ')') {
      if (why) *why = "unbalanced tuple type " + s;
      return false;
    }
    out->is_tuple = true;
    for (const std::string& part : split_top(std::string_view(s).substr(1, s.size() - 2))) {
      TypeSpec e;
      if (!parse_type_impl(part, &e, why)) return false;
      out->elems.push_back(std::move(e));
    }
    if (out->elems.size() == 1) {  // (T) is T
      TypeSpec inner = out->elems[0];
      *out = inner;
    }
    return true;
  }
  const size_t br = s.find('[');
  const std::string base = trim(s.substr(0, br));
  if (base == "f64") {
    out->dtype = DType::F64;
  } else if (base == "f32") {
    out->dtype = DType::F32;
  } else if (base == "i64") {
    out->dtype = DType::I64;
  } else if (base == "bool") {
    out->dtype = DType::Bool;
  } else {
    if (why) *why = "unknown element type " + base;
    return false;
  }
  if (br == std::string::npos) return true;
  if (s.back() != ']') {
    if (why) *why = "unbalanced tensor type " + s;
    return false;
  }
  out->dims = split_top(std::string_view(s).substr(br + 1, s.size() - br - 2));
  return true;
}

// Recursive descent over a size expression.
struct SizeParser {
  std::string_view s;
  size_t i = 0;
  const std::map<std::string, int64_t>& vars;
  bool ok = true;

  void skip() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  int64_t primary() {
    skip();
    if (i >= s.size()) {
      ok = false;
      return 0;
    }
    if (s[i] == '(') {
      ++i;
      int64_t v = expr();
      skip();
      if (i < s.size() && s[i] == ')') {
        ++i;
      } else {
        ok = false;
      }
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      int64_t v = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        v = v * 10 + (s[i] - '0');
        ++i;
      }
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_') {
      size_t a = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      auto it = vars.find(std::string(s.substr(a, i - a)));
      if (it == vars.end()) {
        ok = false;
        return 0;
      }
      return it->second;
    }
    ok = false;
    return 0;
  }
  int64_t term() {
    int64_t v = primary();
    for (;;) {
      skip();
      if (i < s.size() && s[i] == '*') {
        ++i;
        v *= primary();
      } else if (i < s.size() && s[i] == '/') {
        ++i;
        int64_t d = primary();
        if (d == 0 || v % d != 0) {
          ok = false;
          return 0;
        }
        v /= d;
      } else {
        return v;
      }
    }
  }
  int64_t expr() {
    int64_t v = term();
    for (;;) {
      skip();
      if (i < s.size() && s[i] == '+') {
        ++i;
        v += term();
      } else if (i < s.size() && s[i] == '-') {
        ++i;
        v -= term();
      } else {
        return v;
      }
    }
  }
};

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

void bind_vars(const TypeSpec& t, std::map<std::string, int64_t>& vars, std::mt19937_64& rng,
               const RandomArgOptions& opt) {
  if (t.is_tuple) {
    for (const TypeSpec& e : t.elems) bind_vars(e, vars, rng, opt);
    return;
  }
  std::uniform_int_distribution<int64_t> u(opt.size_lo, opt.size_hi);
  for (const std::string& d : t.dims) {
    if (is_identifier(d) && !vars.count(d)) vars[d] = u(rng);
  }
}

bool build(const TypeSpec& t, const std::map<std::string, int64_t>& vars, std::mt19937_64& rng,
           const RandomArgOptions& opt, Value* out) {
  if (t.is_tuple) {
    std::vector<Value> elems;
    for (const TypeSpec& e : t.elems) {
      Value v;
      if (!build(e, vars, rng, opt, &v)) return false;
      elems.push_back(std::move(v));
    }
    *out = Value::tuple(std::move(elems));
    return true;
  }
  std::vector<int64_t> shape;
  for (const std::string& d : t.dims) {
    int64_t n = 0;
    if (!eval_size(d, vars, &n) || n < 0) return false;
    shape.push_back(n);
  }
  Value v = Value::zeros(t.dtype, shape);
  std::uniform_real_distribution<double> ur(opt.lo, opt.hi);
  std::uniform_int_distribution<int64_t> ui(0, 2);
  std::bernoulli_distribution ub(0.5);
  const int64_t n = v.numel();
  for (int64_t k = 0; k < n; ++k) {
    const size_t i = static_cast<size_t>(k);
    switch (t.dtype) {
      case DType::F64:
        v.f64_mut()[i] = ur(rng);
        break;
      case DType::F32:
        v.f32_mut()[i] = static_cast<float>(ur(rng));
        break;
      case DType::I64:
        v.i64_mut()[i] = ui(rng);
        break;
      case DType::Bool:
        v.bool_mut()[i] = ub(rng) ? 1 : 0;
        break;
    }
  }
  *out = v;
  return true;
}

}  // namespace

bool parse_type(std::string_view text, TypeSpec* out, std::string* why) {
  *out = TypeSpec{};
  return parse_type_impl(std::string(text), out, why);
}

bool eval_size(std::string_view text, const std::map<std::string, int64_t>& vars, int64_t* out) {
  SizeParser p{text, 0, vars};
  const int64_t v = p.expr();
  p.skip();
  if (!p.ok || p.i != text.size()) return false;
  *out = v;
  return true;
}

Result<std::vector<Value>> random_arguments(const FunctionInfo& info, std::mt19937_64& rng,
                                            std::map<std::string, int64_t>* sizes,
                                            const RandomArgOptions& opt) {
  std::vector<TypeSpec> types;
  for (const ParamInfo& p : info.params) {
    TypeSpec t;
    std::string why;
    if (!parse_type(p.type, &t, &why)) {
      Error e;
      e.message = "cannot parse the type of parameter " + p.name + ": " + why;
      e.rendered = e.message;
      return e;
    }
    types.push_back(std::move(t));
  }
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::map<std::string, int64_t> vars = sizes ? *sizes : std::map<std::string, int64_t>{};
    for (const TypeSpec& t : types) bind_vars(t, vars, rng, opt);
    std::vector<Value> args;
    bool ok = true;
    for (const TypeSpec& t : types) {
      Value v;
      if (!build(t, vars, rng, opt, &v)) {
        ok = false;
        break;
      }
      args.push_back(std::move(v));
    }
    if (ok) {
      if (sizes) *sizes = vars;
      return args;
    }
  }
  Error e;
  e.message = "no sizes found for the parameters of " + info.name;
  e.rendered = e.message;
  return e;
}

// ---------------------------------------------------------------------------------------------
// Finite differences.

std::vector<double> FdJacobian::row(int64_t r) const {
  return std::vector<double>(data.begin() + r * cols, data.begin() + (r + 1) * cols);
}

std::vector<double> FdJacobian::times(const std::vector<double>& t) const {
  std::vector<double> out(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (!computed[static_cast<size_t>(c)]) continue;
      out[static_cast<size_t>(r)] += at(r, c) * t[static_cast<size_t>(c)];
    }
  }
  return out;
}

std::vector<double> FdJacobian::transpose_times(const std::vector<double>& ct) const {
  std::vector<double> out(static_cast<size_t>(cols), std::nan(""));
  for (int64_t c = 0; c < cols; ++c) {
    if (!computed[static_cast<size_t>(c)]) continue;
    double s = 0;
    for (int64_t r = 0; r < rows; ++r) s += at(r, c) * ct[static_cast<size_t>(r)];
    out[static_cast<size_t>(c)] = s;
  }
  return out;
}

Result<FdJacobian> fd_jacobian(const Module& m, const std::string& fn,
                               const std::vector<Value>& args, const std::vector<int>& active,
                               const FdOptions& opt) {
  auto base = m.evaluate(fn, args, opt.eval);
  if (!base.ok()) return base.errors();
  FdJacobian J;
  J.result = base.value();
  J.value = real_elements(base.value());
  J.rows = static_cast<int64_t>(J.value.size());
  for (double v : J.value) J.finite = J.finite && std::isfinite(v);
  // Columns: (argument, element).
  std::vector<std::pair<int, int64_t>> columns;
  for (int a : active) {
    const int64_t n = real_count(args[static_cast<size_t>(a)]);
    for (int64_t k = 0; k < n; ++k) columns.push_back({a, k});
  }
  J.cols = static_cast<int64_t>(columns.size());
  J.data.assign(static_cast<size_t>(J.rows * J.cols), std::nan(""));
  J.computed.assign(static_cast<size_t>(J.cols), opt.max_columns <= 0);
  if (opt.max_columns > 0) {
    const int64_t want = std::min(opt.max_columns, J.cols);
    for (int64_t i = 0; i < want; ++i) {
      J.computed[static_cast<size_t>(i * J.cols / want)] = true;
    }
  }
  for (int64_t c = 0; c < J.cols; ++c) {
    if (!J.computed[static_cast<size_t>(c)]) continue;
    const auto [a, k] = columns[static_cast<size_t>(c)];
    const Value& arg = args[static_cast<size_t>(a)];
    std::vector<double> xs = real_elements(arg);
    const double x = xs[static_cast<size_t>(k)];
    // Is element k of this argument an f32? Find its leaf.
    bool f32 = false;
    {
      int64_t seen = 0;
      // Flatten leaves in order.
      std::vector<Value> leaves;
      std::function<void(const Value&)> walk = [&](const Value& v) {
        if (v.is_tuple()) {
          for (const Value& e : v.elems()) walk(e);
        } else if (is_real(v.dtype())) {
          leaves.push_back(v);
        }
      };
      walk(arg);
      for (const Value& l : leaves) {
        if (k < seen + l.numel()) {
          f32 = l.dtype() == DType::F32;
          break;
        }
        seen += l.numel();
      }
    }
    const double rel = f32 ? opt.f32_rel_step : opt.rel_step;
    const double h = rel * std::max(1.0, std::fabs(x));
    auto eval_at = [&](double xv, std::vector<double>* out) -> std::optional<std::vector<Error>> {
      std::vector<double> ys = xs;
      ys[static_cast<size_t>(k)] = xv;
      std::vector<Value> shifted = args;
      shifted[static_cast<size_t>(a)] = with_real_elements(arg, ys);
      auto r = m.evaluate(fn, shifted, opt.eval);
      if (!r.ok()) return r.errors();
      *out = real_elements(r.value());
      return std::nullopt;
    };
    auto round = [&](double v) { return f32 ? static_cast<double>(static_cast<float>(v)) : v; };
    auto central = [&](double step, std::vector<double>* d) -> std::optional<std::vector<Error>> {
      const double xp = round(x + step), xm = round(x - step);
      std::vector<double> fp, fm;
      if (auto e = eval_at(xp, &fp)) return e;
      if (auto e = eval_at(xm, &fm)) return e;
      d->resize(fp.size());
      for (size_t r = 0; r < fp.size(); ++r) (*d)[r] = (fp[r] - fm[r]) / (xp - xm);
      return std::nullopt;
    };
    std::vector<double> d1, d2;
    if (auto e = central(h, &d1)) return *e;
    if (auto e = central(h / 2, &d2)) return *e;
    if (static_cast<int64_t>(d1.size()) != J.rows || static_cast<int64_t>(d2.size()) != J.rows) {
      Error e;
      e.message = "the number of real elements of the result of " + fn + " changed";
      e.rendered = e.message;
      return e;
    }
    for (int64_t r = 0; r < J.rows; ++r) {
      const double a1 = d1[static_cast<size_t>(r)], a2 = d2[static_cast<size_t>(r)];
      const double est = (opt.richardson && !f32) ? (4 * a2 - a1) / 3 : a2;
      J.data[static_cast<size_t>(r * J.cols + c)] = est;
      if (!std::isfinite(est)) J.finite = false;
      if (std::isfinite(a1) && std::isfinite(a2)) {
        J.inconsistency = std::max(J.inconsistency, rho(a1, a2));
      }
    }
  }
  return J;
}

double fd_scalar(const std::function<double(double)>& f, double x, double rel_step) {
  const double h = rel_step * std::max(1.0, std::fabs(x));
  const double d1 = (f(x + h) - f(x - h)) / (2 * h);
  const double d2 = (f(x + h / 2) - f(x - h / 2)) / h;
  return (4 * d2 - d1) / 3;
}

// ---------------------------------------------------------------------------------------------
// Comparisons.

std::string to_text(const std::vector<double>& xs) {
  std::ostringstream s;
  s.precision(17);
  s << "[";
  for (size_t i = 0; i < xs.size(); ++i) s << (i ? ", " : "") << xs[i];
  s << "]";
  return s.str();
}

std::string compare_reals(const std::vector<double>& got, const std::vector<double>& want,
                          double tol, const std::vector<bool>* mask) {
  if (got.size() != want.size()) {
    return "expected " + std::to_string(want.size()) + " real elements, got " +
           std::to_string(got.size()) + "\n  got:      " + to_text(got) +
           "\n  expected: " + to_text(want);
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (mask && !(*mask)[i]) continue;
    const double x = got[i], y = want[i];
    bool same;
    if (!std::isfinite(x) || !std::isfinite(y)) {
      same = (std::isnan(x) && std::isnan(y)) || x == y;
    } else {
      same = rho(x, y) <= tol;
    }
    if (!same) {
      std::ostringstream s;
      s.precision(17);
      s << "element " << i << ": got " << x << ", expected " << y << " (rho = " << rho(x, y)
        << ", tol = " << tol << ")\n  got:      " << to_text(got)
        << "\n  expected: " << to_text(want);
      return s.str();
    }
  }
  return "";
}

::testing::AssertionResult RealsNear(const std::vector<double>& got,
                                     const std::vector<double>& want, double tol) {
  std::string d = compare_reals(got, want, tol);
  if (d.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << d;
}

::testing::AssertionResult ValueNear(const Value& got, const std::vector<double>& want,
                                     double tol) {
  std::string d = compare_reals(real_elements(got), want, tol);
  if (d.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << d << "\n  value: " << value_to_json(got);
}

::testing::AssertionResult ValuesNear(const Value& got, const Value& want, double tol) {
  if (got.type_string() != want.type_string()) {
    return ::testing::AssertionFailure()
           << "types differ: got " << got.type_string() << ", expected " << want.type_string();
  }
  return ValueNear(got, real_elements(want), tol);
}

Result<Module> load(std::string_view source, const std::string& name) {
  return Module::from_string(source, name);
}

::testing::AssertionResult DerivedEquals(const Module& m, const std::string& derived,
                                         const std::vector<Value>& args,
                                         const std::vector<double>& expected, double tol) {
  auto r = m.evaluate(derived, args);
  if (!r.ok()) {
    return ::testing::AssertionFailure() << derived << " failed:\n" << r.message();
  }
  ::testing::AssertionResult c = ValueNear(r.value(), expected, tol);
  if (!c) return ::testing::AssertionFailure() << derived << ": " << c.message();
  return c;
}

::testing::AssertionResult FdGradientEquals(const Module& m, const std::string& fn,
                                            const std::vector<Value>& args,
                                            const std::vector<int>& active,
                                            const std::vector<double>& expected, double tol) {
  auto J = fd_jacobian(m, fn, args, active);
  if (!J.ok()) {
    return ::testing::AssertionFailure() << "evaluating " << fn << " failed:\n" << J.message();
  }
  std::string d = compare_reals(J.value().data, expected, tol);
  if (!d.empty()) {
    return ::testing::AssertionFailure()
           << "finite differences of " << fn << " disagree with the closed form: " << d;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult DerivedMatchesFd(const Module& m, const std::string& derived,
                                            const std::string& fn, const std::vector<Value>& args,
                                            const std::vector<int>& active, double tol) {
  auto J = fd_jacobian(m, fn, args, active);
  if (!J.ok()) {
    return ::testing::AssertionFailure() << "evaluating " << fn << " failed:\n" << J.message();
  }
  auto r = m.evaluate(derived, args);
  if (!r.ok()) {
    return ::testing::AssertionFailure() << derived << " failed:\n" << r.message();
  }
  std::string d = compare_reals(real_elements(r.value()), J.value().data, tol);
  if (!d.empty()) {
    return ::testing::AssertionFailure()
           << derived << " disagrees with finite differences of " << fn << ": " << d;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace cotangent::adtest
