#include "ad/random_program.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "ad/fd_harness.h"

namespace cotangent::adtest {

std::string RandomProgram::decl() const {
  std::string s;
  for (size_t i = 0; i < params.size(); ++i) {
    s += (i ? ", " : "") + params[i].name + ": " + params[i].type;
  }
  return s;
}

std::string RandomProgram::call() const {
  std::string s;
  for (size_t i = 0; i < params.size(); ++i) s += (i ? ", " : "") + params[i].name;
  return s;
}

std::vector<int> RandomProgram::real_params() const {
  std::vector<int> r;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].index) r.push_back(static_cast<int>(i));
  }
  return r;
}

std::vector<int> RandomProgram::tensor_params() const {
  std::vector<int> r;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].index && !params[i].dims.empty()) r.push_back(static_cast<int>(i));
  }
  return r;
}

namespace {

// Types of generated expressions: rank 0, 1 or 2, dimensions as size expressions.
struct Ty {
  int rank = 0;
  std::string d0, d1;
  static Ty S() { return {}; }
  static Ty V(std::string d) { return Ty{1, std::move(d), ""}; }
  static Ty M(std::string a, std::string b) { return Ty{2, std::move(a), std::move(b)}; }
};

struct Var {
  std::string name;
  Ty ty;
};

// An index variable of a binder (flag >= 0: the extent may be left to inference when the body
// uses it as a whole index of a dimension of that extent), or a loop counter (flag < 0; its
// extent is the trip count, a size expression or a literal).
struct IndexVar {
  std::string name;
  std::string extent;
  int flag = -1;
  bool counter() const { return flag < 0; }
};

enum class HelperKind { ScalarOfVec, VecOfVec, Pair };
struct Helper {
  std::string name;
  HelperKind kind;
};

struct Ctx {
  std::vector<Var> vars;
  std::vector<IndexVar> idx;
  std::vector<std::string> lens;  // vector lengths of this function (size expressions)
  std::string index_param;        // "" or an i64[index_len] whose values are < index_target
  std::string index_len, index_target;
  std::vector<Helper> helpers;
  std::string g_call;  // "" or a call of g (from f), of type f64[g_len]
  std::string g_len;
};

// The parenthesized form of a size expression, for use as an operand.
std::string par(const std::string& e) {
  return e.find(' ') == std::string::npos ? e : "(" + e + ")";
}

class Gen {
 public:
  Gen(uint64_t seed, const RandomProgramOptions& opt) : rng_(seed), opt_(opt) { prog_.seed = seed; }

  RandomProgram run();

 private:
  std::mt19937_64 rng_;
  RandomProgramOptions opt_;
  RandomProgram prog_;
  int uniq_ = 0;
  // Per binder flag: used as a whole index of a dimension of its extent / of another extent.
  std::vector<std::pair<bool, bool>> flags_;

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  const T& pick_of(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(static_cast<int>(v.size())))];
  }
  std::string fresh(const std::string& prefix) { return prefix + std::to_string(uniq_++); }

  IndexVar binder_var(const std::string& extent) {
    flags_.push_back({false, false});
    return IndexVar{fresh("ix"), extent, static_cast<int>(flags_.size()) - 1};
  }
  // The binder as written: with its extent, or without when inference will find it.
  std::string binder(const IndexVar& iv) {
    const auto [match, mismatch] = flags_[static_cast<size_t>(iv.flag)];
    if (match && !mismatch && coin(0.6)) return iv.name;
    return iv.name + ": " + iv.extent;
  }
  // A whole-index use of `iv` in a dimension of extent `dim`.
  std::string whole(const IndexVar& iv, const std::string& dim) {
    if (!iv.counter()) {
      auto& f = flags_[static_cast<size_t>(iv.flag)];
      (iv.extent == dim ? f.first : f.second) = true;
    }
    return iv.name;
  }

  std::string lit() {
    static const char* const kLits[] = {"0.5", "1.5", "2.0", "0.25", "0.75", "1.25", "3.0", "0.1"};
    std::string s = kLits[pick(8)];
    return coin(0.25) ? "(-" + s + ")" : s;
  }
  std::string len(const Ctx& c) { return pick_of(c.lens); }

  // Expressions of each type; `d` is the remaining depth.
  std::string scalar(Ctx& c, int d);
  std::string leaf(Ctx& c);
  std::string vec(Ctx& c, const std::string& L, int d);
  std::string mat(Ctx& c, const std::string& L0, const std::string& L1, int d);
  std::string of_type(Ctx& c, const Ty& t, int d);
  std::string cond(Ctx& c, int d);
  Ty random_type(const Ctx& c);

  std::string unary(const std::string& a, const std::function<std::string()>& second);
  std::string let_block(Ctx& c, int d, const std::function<std::string(Ctx&)>& body);
  std::string tuple_block(Ctx& c, int d, const std::function<std::string(Ctx&)>& body);
  std::string scalar_loop(Ctx& c, int d);
  std::string loop_update(Ctx& c, int d);
  std::string vector_loop(Ctx& c, const std::string& L, int d);
  std::string trip_count(const Ctx& c);

  std::string helper(Ctx base, int i, HelperKind kind);
};

Ty Gen::random_type(const Ctx& c) {
  const int r = pick(20);
  if (r < 10) return Ty::S();
  if (r < 17) return Ty::V(len(c));
  return Ty::M(len(c), len(c));
}

std::string Gen::of_type(Ctx& c, const Ty& t, int d) {
  if (t.rank == 0) return scalar(c, d);
  if (t.rank == 1) return vec(c, t.d0, d);
  return mat(c, t.d0, t.d1, d);
}

// ---------------------------------------------------------------------------------------------
// Leaves: literals, scalar variables, element reads with every index pattern.

std::string Gen::leaf(Ctx& c) {
  struct Cand {
    std::string text;
    std::vector<std::pair<const IndexVar*, std::string>> uses;  // whole uses: (var, dim)
  };
  std::vector<Cand> cands;
  cands.push_back({lit(), {}});
  for (const Var& v : c.vars) {
    if (v.ty.rank == 0) {
      cands.push_back({v.name, {}});
      cands.push_back({v.name, {}});
    }
  }
  for (const IndexVar& iv : c.idx) {
    cands.push_back({"f64(" + iv.name + ")", {}});
  }
  if (coin(0.2)) cands.push_back({"f64(" + len(c) + ")", {}});
  const std::string& ip = c.index_param;
  for (const Var& v : c.vars) {
    const std::string& n = v.name;
    if (v.ty.rank == 1) {
      const std::string& L = v.ty.d0;
      cands.push_back({n + "[0]", {}});
      cands.push_back({n + "[" + L + " - 1]", {}});
      if (!ip.empty() && L == c.index_target) cands.push_back({n + "[" + ip + "[0]]", {}});
      for (const IndexVar& iv : c.idx) {
        const std::string& i = iv.name;
        if (iv.extent == L) {
          if (iv.counter()) {
            cands.push_back({n + "[" + i + "]", {}});
            cands.push_back({n + "[" + L + " - 1 - " + i + "]", {}});
          } else {
            cands.push_back({n + "[" + i + "]", {{&iv, L}}});
            cands.push_back({n + "[" + i + "]", {{&iv, L}}});
            cands.push_back({"([" + i + " + 1 < " + L + "] * " + n + "[" + i + " + 1])", {}});
            cands.push_back({"([" + i + " > 0] * " + n + "[" + i + " - 1])", {}});
            cands.push_back({n + "[" + L + " - 1 - " + i + "]", {}});
            cands.push_back({"(if " + i + " > 0 then " + n + "[" + i + " - 1] else 0.0)", {}});
            cands.push_back({n + "[(" + i + " + 1) % " + par(L) + "]", {}});
          }
        } else {
          // A guarded read across extents: i may run past the end of the vector.
          cands.push_back({"([" + i + " < " + L + "] * " + n + "[" + i + "])", {{&iv, L}}});
        }
        if (L == "2 * n" && iv.extent == "n") {
          cands.push_back({n + "[2 * " + i + "]", {}});
          cands.push_back({n + "[2 * " + i + " + 1]", {}});
        }
        if (L == "n" && iv.extent == "2 * n") cands.push_back({n + "[" + i + " // 2]", {}});
        if (!ip.empty() && L == c.index_target && iv.extent == c.index_len) {
          cands.push_back({n + "[" + ip + "[" + i + "]]", {{&iv, c.index_len}}});
          cands.push_back({n + "[" + ip + "[" + i + "]]", {{&iv, c.index_len}}});
        }
      }
    } else if (v.ty.rank == 2) {
      const std::string &L0 = v.ty.d0, &L1 = v.ty.d1;
      cands.push_back({n + "[0, 0]", {}});
      cands.push_back({n + "[" + L0 + " - 1, 0]", {}});
      for (const IndexVar& iv : c.idx) {
        const std::string& i = iv.name;
        if (iv.extent == L0) {
          const std::vector<std::pair<const IndexVar*, std::string>> u =
              iv.counter() ? std::vector<std::pair<const IndexVar*, std::string>>{}
                           : std::vector<std::pair<const IndexVar*, std::string>>{{&iv, L0}};
          cands.push_back({n + "[" + i + ", 0]", u});
          cands.push_back({n + "[" + i + ", " + L1 + " - 1]", u});
        }
        if (iv.extent == L1 && !iv.counter()) {
          cands.push_back({n + "[0, " + i + "]", {{&iv, L1}}});
        }
        if (!ip.empty() && L0 == c.index_target && iv.extent == c.index_len && !iv.counter()) {
          cands.push_back({n + "[" + ip + "[" + i + "], 0]", {{&iv, c.index_len}}});
        }
        for (const IndexVar& jv : c.idx) {
          const std::string& j = jv.name;
          if (iv.counter() || jv.counter()) continue;
          if (iv.extent == L0 && jv.extent == L1) {
            cands.push_back({n + "[" + i + ", " + j + "]", {{&iv, L0}, {&jv, L1}}});
            cands.push_back({n + "[" + i + ", " + j + "]", {{&iv, L0}, {&jv, L1}}});
            cands.push_back({n + "[" + L0 + " - 1 - " + i + ", " + j + "]", {{&jv, L1}}});
            cands.push_back({"([" + i + " + 1 < " + L0 + "] * " + n + "[" + i + " + 1, " + j + "])",
                             {{&jv, L1}}});
            cands.push_back({"([" + j + " <= " + i + "] * " + n + "[" + i + ", " + j + "])",
                             {{&iv, L0}, {&jv, L1}}});
          }
          if (!ip.empty() && L0 == c.index_target && iv.extent == c.index_len && jv.extent == L1) {
            cands.push_back(
                {n + "[" + ip + "[" + i + "], " + j + "]", {{&iv, c.index_len}, {&jv, L1}}});
          }
        }
      }
    }
  }
  const Cand& k = pick_of(cands);
  for (const auto& [iv, dim] : k.uses) whole(*iv, dim);
  return k.text;
}

// ---------------------------------------------------------------------------------------------
// Scalars.

std::string Gen::unary(const std::string& a, const std::function<std::string()>& second) {
  const int r = pick(26);
  // The second operand is generated only when it is used: generating it records whole-index uses.
  const std::string b =
      (r == 13 || r == 14 || r == 15 || r == 16 || r == 22 || r == 23) ? second() : "";
  switch (r) {
    case 0:
      return "sin(" + a + ")";
    case 1:
      return "cos(" + a + ")";
    case 2:
      return "tanh(" + a + ")";
    case 3:
      return "sigmoid(" + a + ")";
    case 4:
      return "exp(tanh(" + a + "))";
    case 5:
      return "exp(-(" + a + " * " + a + "))";
    case 6:
      return "log(1.0 + " + a + " * " + a + ")";
    case 7:
      return "log1p(" + a + " * " + a + ")";
    case 8:
      return "sqrt(1.0 + " + a + " * " + a + ")";
    case 9:
      return "expm1(sin(" + a + "))";
    case 10:
      return "lgamma(1.5 + " + a + " * " + a + ")";
    case 11:
      return "tan(0.5 * tanh(" + a + "))";
    case 12:
      return "abs(" + a + ")";
    case 13:
      return "atan2(" + a + ", 1.0 + " + b + " * " + b + ")";
    case 14:
      return "atan2(" + a + ", " + b + ")";
    case 15:
      return "pow(1.0 + " + a + " * " + a + ", tanh(" + b + "))";
    case 16:
      return "pow(sigmoid(" + a + ") + 0.5, " + b + ")";
    case 17:
      return "(" + a + " ^ 2)";
    case 18:
      return "(" + a + " ^ 3)";
    case 19:
      return "((1.0 + " + a + " * " + a + ") ^ -1)";
    case 20:
      return "(-" + a + ")";
    case 21:
      return "relu(" + a + ")";
    case 22:
      return "max(" + a + ", " + b + ")";
    case 23:
      return "min(" + a + ", " + b + ")";
    case 24:
      return "log(exp(tanh(" + a + ")) + 0.5)";
    default:
      return "pow(1.5 + sin(" + a + "), 2.5)";
  }
}

std::string Gen::cond(Ctx& c, int d) {
  const int r = pick(10);
  if (r < 2 && !c.idx.empty()) {
    const IndexVar& iv = pick_of(c.idx);
    if (coin()) return iv.name + " > 0";
    const IndexVar& jv = pick_of(c.idx);
    return iv.name + " <= " + jv.name;
  }
  if (r < 7) return scalar(c, d - 1) + " > " + scalar(c, d - 1);
  if (r < 8) return scalar(c, d - 1) + " < " + lit();
  if (r < 9) return scalar(c, d - 1) + " > 0.0 && " + scalar(c, d - 1) + " < 0.5";
  return "!(" + scalar(c, d - 1) + " >= " + scalar(c, d - 1) + ")";
}

std::string Gen::scalar(Ctx& c, int d) {
  if (d <= 0) return leaf(c);
  const int r = pick(100);
  if (r < 14) return leaf(c);
  if (r < 30) {
    const std::string a = scalar(c, d - 1), b = scalar(c, d - 1);
    switch (pick(6)) {
      case 0:
        return "(" + a + " + " + b + ")";
      case 1:
        return "(" + a + " - " + b + ")";
      case 2:
      case 3:
        return "(" + a + " * " + b + ")";
      case 4:
        return "(" + a + " / (1.0 + " + b + " * " + b + "))";
      default:
        return "(" + a + " / (2.0 + sin(" + b + ")))";
    }
  }
  if (r < 44) {
    const std::string a = scalar(c, d - 1);
    return unary(a, [&] { return coin(0.7) ? leaf(c) : scalar(c, d - 1); });
  }
  if (r < 54) {  // reductions over one or two fresh indices
    const char* kw = pick(4) == 0 ? (coin() ? "max" : "min") : "sum";
    IndexVar iv = binder_var(len(c));
    c.idx.push_back(iv);
    std::string text;
    if (std::string(kw) == "sum" && coin(0.25)) {
      IndexVar jv = binder_var(len(c));
      c.idx.push_back(jv);
      const std::string body = scalar(c, d - 1);
      c.idx.pop_back();
      text = "(sum " + binder(iv) + ", " + binder(jv) + ". " + body + ")";
    } else {
      const std::string body = scalar(c, d - 1);
      text = std::string("(") + kw + " " + binder(iv) + ". " + body + ")";
    }
    c.idx.pop_back();
    return text;
  }
  if (r < 60) {
    const std::string k = cond(c, d);
    const std::string a = scalar(c, d - 1), b = scalar(c, d - 1);
    return "(if " + k + " then " + a + " else " + b + ")";
  }
  if (r < 65) return let_block(c, d, [&](Ctx& cc) { return scalar(cc, d - 1); });
  if (r < 68) return tuple_block(c, d, [&](Ctx& cc) { return scalar(cc, d - 1); });
  if (r < 74) return scalar_loop(c, d);
  if (r < 82) {  // prelude
    const std::string L = len(c);
    switch (pick(8)) {
      case 0:
        return "dot(" + vec(c, L, d - 1) + ", " + vec(c, L, d - 1) + ")";
      case 1:
        return "sqnorm(" + vec(c, L, d - 1) + ")";
      case 2:
        return "logsumexp(" + vec(c, L, d - 1) + ")";
      case 3:
        return "mean(" + vec(c, L, d - 1) + ")";
      case 4:
        return "vsum(" + vec(c, L, d - 1) + ")";
      case 5:
        return "trace(" + mat(c, L, L, d - 1) + ")";
      case 6:
        return "relu(" + scalar(c, d - 1) + ")";
      default:
        return "norm2(" + vec(c, L, d - 1) + ")";
    }
  }
  if (r < 88) {  // helper calls
    std::vector<Helper> hs;
    for (const Helper& h : c.helpers) {
      if (h.kind == HelperKind::ScalarOfVec) hs.push_back(h);
    }
    if (!hs.empty()) {
      const Helper& h = pick_of(hs);
      return h.name + "(" + scalar(c, d - 1) + ", " + vec(c, len(c), d - 1) + ")";
    }
    return leaf(c);
  }
  if (r < 93) {  // an element of a vector expression
    const std::string L = len(c);
    const std::string v = vec(c, L, d - 1);
    const std::string u = fresh("u");
    Ctx cc = c;
    cc.vars.push_back({u, Ty::V(L)});
    return "{ let " + u + " = " + v + "; " + scalar(cc, d - 1) + " }";
  }
  if (r < 94 && opt_.allow_stop_gradient) {
    prog_.uses_stop_gradient = true;
    return "stop_gradient(" + scalar(c, d - 1) + ")";
  }
  if (r < 97) return "(f64(" + cond(c, d) + ") * " + scalar(c, d - 1) + ")";
  return "(" + lit() + " * " + scalar(c, d - 1) + ")";
}

// { let v1 = e1; let v2 = e2; body }
std::string Gen::let_block(Ctx& c, int d, const std::function<std::string(Ctx&)>& body) {
  Ctx cc = c;
  std::string s = "{ ";
  const int k = 1 + pick(2);
  for (int i = 0; i < k; ++i) {
    const Ty t = random_type(cc);
    const std::string e = of_type(cc, t, d - 1);
    const std::string v = fresh("v");
    s += "let " + v + " = " + e + "; ";
    cc.vars.push_back({v, t});
  }
  // Index variables in cc are those of c; the flags of whole uses are shared.
  return s + body(cc) + " }";
}

// { let (a, b) = (e1, e2); body }, nested patterns, `_`, or a pair from a helper.
std::string Gen::tuple_block(Ctx& c, int d, const std::function<std::string(Ctx&)>& body) {
  Ctx cc = c;
  const std::string a = fresh("p"), b = fresh("p");
  std::string s;
  std::vector<Helper> pairs;
  for (const Helper& h : c.helpers) {
    if (h.kind == HelperKind::Pair) pairs.push_back(h);
  }
  const int r = pick(4);
  if (r == 0 && !pairs.empty()) {
    s = "{ let (" + a + ", " + b + ") = " + pick_of(pairs).name + "(" + scalar(c, d - 1) + ", " +
        scalar(c, d - 1) + "); ";
    cc.vars.push_back({a, Ty::S()});
    cc.vars.push_back({b, Ty::S()});
  } else if (r == 1) {
    const std::string L = len(c);
    s = "{ let ((" + a + ", _), " + b + ") = ((" + scalar(c, d - 1) + ", " + scalar(c, d - 1) +
        "), " + vec(c, L, d - 1) + "); ";
    cc.vars.push_back({a, Ty::S()});
    cc.vars.push_back({b, Ty::V(L)});
  } else {
    const Ty t = random_type(c);
    s = "{ let (" + a + ", " + b + ") = (" + scalar(c, d - 1) + ", " + of_type(c, t, d - 1) + "); ";
    cc.vars.push_back({a, Ty::S()});
    cc.vars.push_back({b, t});
  }
  return s + body(cc) + " }";
}

std::string Gen::trip_count(const Ctx& c) {
  if (coin(0.6)) return pick_of(c.lens);
  return std::to_string(1 + pick(4));
}

std::string Gen::scalar_loop(Ctx& c, int d) {
  const std::string K = trip_count(c);
  const std::string t = fresh("t");
  const int kind = pick(5);
  // Generated only when used: generating records whole-index uses.
  const std::string init = kind < 4 ? scalar(c, d - 1) : "";
  Ctx cc = c;
  cc.idx.push_back(IndexVar{t, K, -1});
  const std::string a = fresh("a");
  cc.vars.push_back({a, Ty::S()});
  switch (kind) {
    case 0: {  // one real state
      const std::string upd = loop_update(cc, d - 1);
      return "(loop " + a + " = " + init + " for " + t + " < " + K + " { 0.5 * " + a + " + " + upd +
             " })";
    }
    case 1: {  // two real states, a block body
      const std::string b = fresh("b");
      cc.vars.push_back({b, Ty::S()});
      const std::string init2 = scalar(c, d - 1);
      const std::string q = fresh("q");
      const std::string upd = loop_update(cc, d - 1);
      const std::string r = fresh("r");
      return "{ let (" + r + ", _) = loop (" + a + ", " + b + ") = (" + init + ", " + init2 +
             ") for " + t + " < " + K + " { let " + q + " = " + upd + "; (0.5 * " + a + " + " + b +
             " * " + q + ", sin(" + a + ") + 0.5 * " + b + ") }; " + r + " }";
    }
    case 2:
    case 3: {  // a while loop with a counter in its state
      const std::string cnt = fresh("c");
      Ctx cw = c;  // no counter variable in a while loop
      cw.vars.push_back({a, Ty::S()});
      std::string upd = loop_update(cw, d - 1);
      // The counter is not a counter variable of the generator (it is not bounded by a size);
      // it is an i64 the body may convert.
      const std::string r = fresh("r");
      std::string guard = cnt + " < " + std::to_string(1 + pick(4));
      if (coin(0.4)) guard += " && " + a + " < 1.5";
      return "{ let (" + r + ", _) = loop (" + a + ", " + cnt + ") = (" + init + ", 0) while " +
             guard + " { (" + a + " + 0.25 + 0.5 * tanh(" + upd + "), " + cnt + " + 1) }; " + r +
             " }";
    }
    default: {  // a vector state, reduced
      const std::string L = len(c);
      const std::string u = fresh("u");
      Ctx cv = c;
      cv.idx.push_back(IndexVar{t, K, -1});
      cv.vars.push_back({u, Ty::V(L)});
      const std::string v0 = vec(c, L, d - 1);
      IndexVar iv = binder_var(L);
      cv.idx.push_back(iv);
      const std::string body = scalar(cv, d - 1);
      const std::string ui = u + "[" + whole(iv, L) + "]";
      const std::string b = binder(iv);
      return "vsum(loop " + u + " = " + v0 + " for " + t + " < " + K + " { for " + b + ". 0.5 * " +
             ui + " + tanh(" + body + ") })";
    }
  }
}

// The update of a scalar loop's state: with loop_nests, most often a loop itself, so that counted
// and while loops nest two and three deep in each other.
std::string Gen::loop_update(Ctx& c, int d) {
  if (opt_.loop_nests && d >= 1 && coin(0.6)) return scalar_loop(c, d);
  return scalar(c, d);
}

// ---------------------------------------------------------------------------------------------
// Vectors and matrices.

std::string Gen::vector_loop(Ctx& c, const std::string& L, int d) {
  const std::string K = trip_count(c);
  const std::string t = fresh("t");
  const std::string u = fresh("u");
  const std::string v0 = vec(c, L, d - 1);
  Ctx cc = c;
  cc.idx.push_back(IndexVar{t, K, -1});
  cc.vars.push_back({u, Ty::V(L)});
  if (coin()) {
    const std::string upd = vec(cc, L, d - 1);
    return "(loop " + u + " = " + v0 + " for " + t + " < " + K + " { 0.5 * " + u +
           " + 0.5 * tanh(" + upd + ") })";
  }
  const std::string cnt = fresh("c"), r = fresh("r");
  Ctx cw = c;  // no counter variable in a while loop
  cw.vars.push_back({u, Ty::V(L)});
  const std::string upd = vec(cw, L, d - 1);
  return "{ let (" + r + ", _) = loop (" + u + ", " + cnt + ") = (" + v0 + ", 0) while " + cnt +
         " < " + std::to_string(1 + pick(3)) + " { (sin(" + u + ") + 0.5 * " + upd + ", " + cnt +
         " + 1) }; " + r + " }";
}

std::string Gen::vec(Ctx& c, const std::string& L, int d) {
  std::vector<std::string> vars;
  for (const Var& v : c.vars) {
    if (v.ty.rank == 1 && v.ty.d0 == L) vars.push_back(v.name);
  }
  auto gen_for = [&](int dd) {
    IndexVar iv = binder_var(L);
    c.idx.push_back(iv);
    const std::string body = dd <= 0 ? leaf(c) : scalar(c, dd);
    c.idx.pop_back();
    return "(for " + binder(iv) + ". " + body + ")";
  };
  if (d <= 0) {
    if (!vars.empty() && coin(0.7)) return pick_of(vars);
    return gen_for(0);
  }
  const int r = pick(100);
  if (r < 12 && !vars.empty()) return pick_of(vars);
  if (r < 32) return gen_for(d - 1);
  if (r < 44) {  // elementwise
    const std::string a = vec(c, L, d - 1);
    switch (pick(10)) {
      case 0:
        return "(" + a + " + " + vec(c, L, d - 1) + ")";
      case 1:
        return "(" + a + " - " + vec(c, L, d - 1) + ")";
      case 2:
        return "(" + a + " * " + vec(c, L, d - 1) + ")";
      case 3:
        return "(" + scalar(c, d - 1) + " * " + a + ")";
      case 4:
        return "tanh(" + a + ")";
      case 5:
        return "sin(" + a + ")";
      case 6:
        return "exp(-(" + a + " * " + a + "))";
      case 7:
        return "max(" + a + ", " + vec(c, L, d - 1) + ")";
      case 8:
        return "(" + a + " / (1.0 + " + vec(c, L, d - 1) + " ^ 2))";
      default:
        return "abs(" + a + ")";
    }
  }
  if (r < 52) {  // prelude
    switch (pick(3)) {
      case 0:
        return "softmax(" + vec(c, L, d - 1) + ")";
      default: {
        const std::string L1 = len(c);
        return "matvec(" + mat(c, L, L1, d - 1) + ", " + vec(c, L1, d - 1) + ")";
      }
    }
  }
  if (r < 58) {  // reductions of vectors: sum or max over rows
    IndexVar iv = binder_var(len(c));
    c.idx.push_back(iv);
    const std::string body = vec(c, L, d - 1);
    c.idx.pop_back();
    const char* kw = coin(0.7) ? "sum" : (coin() ? "max" : "min");
    return std::string("(") + kw + " " + binder(iv) + ". " + body + ")";
  }
  if (r < 62) {  // a row of a matrix
    const std::string L0 = len(c);
    const std::string M = mat(c, L0, L, d - 1);
    const std::string M1 = fresh("M");
    return "{ let " + M1 + " = " + M + "; " + M1 + "[" + (coin() ? "0" : L0 + " - 1") + "] }";
  }
  if (r < 70) {  // accum
    if (!c.index_param.empty() && L == c.index_target && coin()) {
      IndexVar iv = binder_var(c.index_len);
      c.idx.push_back(iv);
      const std::string val = scalar(c, d - 1);
      const std::string key = c.index_param + "[" + whole(iv, c.index_len) + "]";
      c.idx.pop_back();
      return "(accum[" + L + "] " + binder(iv) + ". (" + key + ", " + val + "))";
    }
    IndexVar iv = binder_var(L);
    c.idx.push_back(iv);
    const std::string val = scalar(c, d - 1);
    c.idx.pop_back();
    std::string key;
    switch (pick(3)) {
      case 0:
        key = iv.name;
        break;
      case 1:
        key = L + " - 1 - " + iv.name;
        break;
      default:
        key = "(" + iv.name + " + 1) % " + par(L);
        break;
    }
    return "(accum[" + L + "] " + binder(iv) + ". (" + key + ", " + val + "))";
  }
  if (r < 74 && !c.index_param.empty() && L == c.index_len) {  // a gather
    const std::string src = vec(c, c.index_target, d - 1);
    const std::string u = fresh("u");
    IndexVar iv = binder_var(L);
    const std::string text = "{ let " + u + " = " + src + "; for " + iv.name + ". " + u + "[" +
                             c.index_param + "[" + whole(iv, L) + "]] }";
    return text;
  }
  if (r < 78) {
    const std::string k = cond(c, d);
    return "(if " + k + " then " + vec(c, L, d - 1) + " else " + vec(c, L, d - 1) + ")";
  }
  if (r < 84) return let_block(c, d, [&](Ctx& cc) { return vec(cc, L, d - 1); });
  if (r < 86) return tuple_block(c, d, [&](Ctx& cc) { return vec(cc, L, d - 1); });
  if (r < 92) return vector_loop(c, L, d);
  if (r < 96) {
    std::vector<Helper> hs;
    for (const Helper& h : c.helpers) {
      if (h.kind == HelperKind::VecOfVec) hs.push_back(h);
    }
    if (!hs.empty()) {
      return pick_of(hs).name + "(" + vec(c, L, d - 1) + ", " + scalar(c, d - 1) + ")";
    }
  }
  if (!c.g_call.empty() && L == c.g_len && coin()) return c.g_call;
  return gen_for(d - 1);
}

std::string Gen::mat(Ctx& c, const std::string& L0, const std::string& L1, int d) {
  std::vector<std::string> vars;
  for (const Var& v : c.vars) {
    if (v.ty.rank == 2 && v.ty.d0 == L0 && v.ty.d1 == L1) vars.push_back(v.name);
  }
  auto gen_for = [&](int dd) {
    IndexVar iv = binder_var(L0), jv = binder_var(L1);
    c.idx.push_back(iv);
    c.idx.push_back(jv);
    const std::string body = dd <= 0 ? leaf(c) : scalar(c, dd);
    c.idx.pop_back();
    c.idx.pop_back();
    return "(for " + binder(iv) + ", " + binder(jv) + ". " + body + ")";
  };
  if (d <= 0) {
    if (!vars.empty() && coin(0.8)) return pick_of(vars);
    return gen_for(0);
  }
  const int r = pick(100);
  if (r < 30 && !vars.empty()) return pick_of(vars);
  if (r < 50) return gen_for(d - 1);
  if (r < 58) return "outer(" + vec(c, L0, d - 1) + ", " + vec(c, L1, d - 1) + ")";
  if (r < 64) return "transpose(" + mat(c, L1, L0, d - 1) + ")";
  if (r < 70) {
    const std::string K = len(c);
    return "matmul(" + mat(c, L0, K, d - 1) + ", " + mat(c, K, L1, d - 1) + ")";
  }
  if (r < 76 && L0 == L1) return "diag(" + vec(c, L0, d - 1) + ")";
  if (r < 84) {
    switch (pick(3)) {
      case 0:
        return "(" + scalar(c, d - 1) + " * " + mat(c, L0, L1, d - 1) + ")";
      case 1:
        return "tanh(" + mat(c, L0, L1, d - 1) + ")";
      default:
        return "(" + mat(c, L0, L1, d - 1) + " + " + mat(c, L0, L1, d - 1) + ")";
    }
  }
  if (r < 92) {  // rows from a vector body
    IndexVar iv = binder_var(L0);
    c.idx.push_back(iv);
    const std::string body = vec(c, L1, d - 1);
    c.idx.pop_back();
    return "(for " + binder(iv) + ". " + body + ")";
  }
  if (r < 96 && !c.index_param.empty() && L0 == c.index_target) {  // accum of rows
    IndexVar iv = binder_var(c.index_len);
    c.idx.push_back(iv);
    const std::string val = vec(c, L1, d - 1);
    const std::string key = c.index_param + "[" + whole(iv, c.index_len) + "]";
    c.idx.pop_back();
    return "(accum[" + L0 + "] " + binder(iv) + ". (" + key + ", " + val + "))";
  }
  return gen_for(d - 1);
}

// ---------------------------------------------------------------------------------------------
// Functions.

std::string Gen::helper(Ctx base, int i, HelperKind kind) {
  const std::string name = "h" + std::to_string(i);
  Ctx c;
  c.lens = {"p"};
  c.helpers = base.helpers;
  const int depth = 2 + pick(2);
  switch (kind) {
    case HelperKind::ScalarOfVec:
      c.vars = {{"ha", Ty::S()}, {"hv", Ty::V("p")}};
      return "def " + name + "(ha: f64, hv: f64[p]) -> f64 {\n  " + scalar(c, depth) + "\n}\n";
    case HelperKind::VecOfVec:
      c.vars = {{"hv", Ty::V("p")}, {"ha", Ty::S()}};
      return "def " + name + "(hv: f64[p], ha: f64) -> f64[p] {\n  " + vec(c, "p", depth) + "\n}\n";
    case HelperKind::Pair:
    default:
      c.vars = {{"ha", Ty::S()}, {"hb", Ty::S()}};
      c.lens = {"2"};  // no vector parameter: vectors here have a literal length
      return "def " + name + "(ha: f64, hb: f64) -> (f64, f64) {\n  (" + scalar(c, depth - 1) +
             ", " + scalar(c, depth - 1) + ")\n}\n";
  }
}

RandomProgram Gen::run() {
  // Parameters.
  std::vector<GenParam>& ps = prog_.params;
  bool has_m = false, has_z = false, has_idx = false;
  if (coin(0.7)) ps.push_back({"s", "f64", {}, false});
  ps.push_back({"x", "f64[n]", {"n"}, false});
  if (coin(0.5)) ps.push_back({"A", "f64[n, n]", {"n", "n"}, false});
  if (coin(0.3)) {
    ps.push_back({"B", "f64[n, m]", {"n", "m"}, false});
    has_m = true;
  }
  if (coin(has_m ? 0.5 : 0.2)) {
    ps.push_back({"w", "f64[m]", {"m"}, false});
    has_m = true;
  }
  if (coin(0.3)) {
    ps.push_back({"z", "f64[2 * n]", {"2 * n"}, false});
    has_z = true;
  }
  if (coin(0.4)) {
    ps.push_back({"idx", "i64[k]", {"k"}, true});
    has_idx = true;
  }
  // A few orders: the size variables are bound wherever a whole dimension names them.
  if (coin(0.3)) std::shuffle(ps.begin(), ps.end(), rng_);

  Ctx top;
  top.lens = {"n"};
  if (has_m) top.lens.push_back("m");
  if (has_z) top.lens.push_back("2 * n");
  if (has_idx) {
    top.lens.push_back("k");
    top.index_param = "idx";
    top.index_len = "k";
    top.index_target = "n";
  }
  for (const GenParam& p : ps) {
    if (p.index) continue;
    Ty t = p.dims.empty()       ? Ty::S()
           : p.dims.size() == 1 ? Ty::V(p.dims[0])
                                : Ty::M(p.dims[0], p.dims[1]);
    top.vars.push_back({p.name, t});
  }

  // Helpers.
  std::string src;
  const int nh = pick(opt_.max_helpers + 1);
  for (int i = 0; i < nh; ++i) {
    const HelperKind kind = static_cast<HelperKind>(pick(3));
    src += helper(top, i, kind) + "\n";
    top.helpers.push_back({"h" + std::to_string(i), kind});
  }

  auto body = [&](Ctx c, const std::function<std::string(Ctx&, int)>& result) {
    std::string s;
    const int k = pick(opt_.max_lets + 1);
    for (int i = 0; i < k; ++i) {
      const Ty t = random_type(c);
      const std::string v = fresh("v");
      s += "  let " + v + " = " + of_type(c, t, opt_.max_depth - 1 - pick(2)) + "\n";
      c.vars.push_back({v, t});
    }
    return s + "  " + result(c, opt_.max_depth) + "\n";
  };

  // g: a vector result.
  prog_.g_len = pick_of(top.lens);
  const std::string g = "def g(" + prog_.decl() + ") -> f64[" + prog_.g_len + "] {\n" +
                        body(top, [&](Ctx& c, int d) { return vec(c, prog_.g_len, d); }) + "}\n";

  // f: a scalar result; it may call g.
  Ctx fc = top;
  if (coin(0.3)) {
    fc.g_call = "g(" + prog_.call() + ")";
    fc.g_len = prog_.g_len;
  }
  const std::string f = "def f(" + prog_.decl() + ") -> f64 {\n" +
                        body(fc, [&](Ctx& c, int d) { return scalar(c, d); }) + "}\n";
  prog_.source = src + f + "\n" + g;
  return prog_;
}

}  // namespace

RandomProgram random_program(uint64_t seed, const RandomProgramOptions& opt) {
  return Gen(seed, opt).run();
}

std::vector<Value> random_program_arguments(const RandomProgram& p, std::mt19937_64& rng,
                                            std::map<std::string, int64_t>* sizes) {
  std::uniform_int_distribution<int64_t> size(1, 4);
  std::map<std::string, int64_t> sz = {{"n", size(rng)}, {"m", size(rng)}, {"k", size(rng)}};
  auto dim = [&](const std::string& e) -> int64_t {
    if (e == "2 * n") return 2 * sz["n"];
    return sz[e];
  };
  std::vector<Value> args;
  for (const GenParam& g : p.params) {
    std::vector<int64_t> shape;
    size_t numel = 1;
    for (const std::string& e : g.dims) {
      shape.push_back(dim(e));
      numel *= static_cast<size_t>(shape.back());
    }
    if (g.index) {
      std::uniform_int_distribution<int64_t> ix(0, sz["n"] - 1);
      std::vector<int64_t> data(numel);
      for (int64_t& v : data) v = ix(rng);
      args.push_back(i64_vector(data));
    } else if (shape.empty()) {
      args.push_back(Value::f64(random_reals(1, rng)[0]));
    } else {
      args.push_back(f64_tensor(shape, random_reals(numel, rng)));
    }
  }
  if (sizes) *sizes = sz;
  return args;
}

}  // namespace cotangent::adtest
