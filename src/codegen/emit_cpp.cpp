#include "codegen/emit_cpp.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "codegen/expr.h"
#include "codegen/may_fail.h"
#include "codegen/memory_plan.h"

namespace cot::codegen {

namespace {

// The functions codegen/vector_math.h has as cot_vec::NAME.
bool has_vector_variant(Prim p) {
  switch (p) {
    case Prim::Exp:
    case Prim::Log:
    case Prim::Sin:
    case Prim::Cos:
    case Prim::Pow:
    case Prim::Tan:
    case Prim::Tanh:
    case Prim::Log1p:
    case Prim::Expm1:
    case Prim::Atan2:
    case Prim::Sigmoid:
      return true;
    default:
      return false;
  }
}

constexpr int64_t kParallelWork = 20000;        // see work() below
constexpr int64_t kMaxWork = int64_t{1} << 40;  // work() saturates here
// The iterations a thread takes at a time from a parallel loop in vector lanes: a multiple of
// every vector length, so only the loop's last block has a tail.
constexpr int64_t kLaneBlock = 256;

const char* c_type(Scalar t) {
  switch (t) {
    case Scalar::F64:
      return "double";
    case Scalar::F32:
      return "float";
    case Scalar::I64:
      return "int64_t";
    case Scalar::Bool:
      return "bool";
  }
  return "double";
}

std::string real_literal(double v, Scalar t) {
  const char* ty = t == Scalar::F32 ? "float" : "double";
  if (std::isnan(v)) return std::string("std::numeric_limits<") + ty + ">::quiet_NaN()";
  if (std::isinf(v)) {
    return std::string(v < 0 ? "-" : "") + "std::numeric_limits<" + ty + ">::infinity()";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return t == Scalar::F32 ? "float(" + s + ")" : s;
}

// The buffers a parallel loop's body reads or writes through pointers declared outside it and
// never re-pointed inside it. Its lambda captures these by value: captured by reference, every
// access reloads the pointer through the closure, and GCC then leaves the loops unvectorized.
class OuterPointers {
 public:
  explicit OuterPointers(const LoopFunction& fn) : fn_(fn) {}
  std::vector<LocalId> of(const Body& b) {
    walk(b);
    std::vector<LocalId> out;
    for (LocalId p : used_) {
      if (!defined_.contains(p) && fn_.locals.at(static_cast<size_t>(p)).is_pointer) {
        out.push_back(p);
      }
    }
    return out;
  }

 private:
  void walk(const Body& b) {
    for (const Stmt& s : b) std::visit([&](const auto& op) { visit(op); }, s.op);
  }
  void use(const ExprP& e) {
    if (!e) return;
    if (e->kind == Expr::Kind::Load || e->kind == Expr::Kind::Local) used_.insert(e->local);
    for (const ExprP& a : e->args) use(a);
  }
  void visit(const Declare& d) {
    defined_.insert(d.local);
    use(d.value);
  }
  void visit(const Assign& a) {
    defined_.insert(a.local);
    use(a.value);
  }
  void visit(const Store& s) {
    used_.insert(s.pointer);
    use(s.index);
    use(s.value);
  }
  void visit(const CheckedInt& c) {
    for (const ExprP& e : c.args) use(e);
  }
  void visit(const For& f) {
    use(f.begin);
    use(f.end);
    walk(f.body);
  }
  void visit(const Forever& f) { walk(f.body); }
  void visit(const Break&) {}
  void visit(const If& i) {
    use(i.cond);
    walk(i.then_body);
    walk(i.else_body);
  }
  void visit(const Fail& f) {
    for (const ExprP& e : f.values) use(e);
  }
  void visit(const Alloc& a) {
    defined_.insert(a.pointer);
    use(a.count);
  }
  void visit(const View& v) {
    defined_.insert(v.pointer);
    used_.insert(v.base);
    use(v.offset);
  }
  void visit(const Copy& c) { transfer(c); }
  void visit(const Combine& c) { transfer(c); }
  void visit(const Fill& f) {
    used_.insert(f.dst);
    use(f.offset);
    use(f.count);
    use(f.value);
  }
  template <class T>  // Copy or Combine: dst[dst_offset + k] from src[src_offset + k]
  void transfer(const T& c) {
    used_.insert(c.dst);
    used_.insert(c.src);
    use(c.dst_offset);
    use(c.src_offset);
    use(c.count);
  }
  void visit(const Swap& s) {  // re-pointed: stays a reference
    defined_.insert(s.a);
    defined_.insert(s.b);
  }
  void visit(const StackInit& s) { defined_.insert(s.pointer); }
  void visit(const StackGrow& g) {
    defined_.insert(g.pointer);
    use(g.count);
  }

  const LoopFunction& fn_;
  std::set<LocalId> used_, defined_;
};

class Emitter {
 public:
  Emitter(const LoopFunction& fn, Linkage linkage) : fn_(fn), linkage_(linkage) {}

  std::string run() {
    out_ << (linkage_ == Linkage::ExternC ? "extern \"C\" int " : "static int ") << fn_.name
         << "(const void* const* inputs, void* const* outputs, cot_ctx* ctx) {\n";
    indent_ = 1;
    for (size_t k = 0; k < fn_.inputs.size(); ++k) {
      const Port& p = fn_.inputs[k];
      line(std::string(c_elem_type(p.type)) + "* " + name(p.pointer) + " = (" +
           c_elem_type(p.type) + "*)inputs[" + std::to_string(k) + "];");
    }
    for (size_t k = 0; k < fn_.outputs.size(); ++k) {
      const Port& p = fn_.outputs[k];
      line(std::string(c_elem_type(p.type)) + "* " + name(p.pointer) + " = (" +
           c_elem_type(p.type) + "*)outputs[" + std::to_string(k) + "];");
    }
    // Local 0 is the while-loop limit (lower.cpp).
    line("const int64_t " + name(0) + " = ctx->max_while_iterations;");
    line("(void)" + name(0) + ";");
    if (fn_.arena_bytes > 0) {
      line("cot_rt::heap arena_heap;");
      line("char* arena = (char*)arena_heap.alloc(" + std::to_string(fn_.arena_bytes) + ");");
      line("if (arena == nullptr) return cot_rt::fail(ctx, 0, {});");
    } else {
      line("char* arena = nullptr;  // only buffers without elements");
      line("(void)arena;");
    }
    body(fn_.body);
    line("return 0;");
    out_ << "}\n";
    return out_.str();
  }

 private:
  std::string name(LocalId id) const {
    const Local& l = fn_.locals.at(static_cast<size_t>(id));
    std::string s = "v" + std::to_string(id) + "_";
    for (char c : l.name) {
      s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    }
    return s;
  }
  void line(const std::string& s) {
    for (int k = 0; k < indent_; ++k) out_ << "  ";
    out_ << s << "\n";
  }
  std::string local_type(LocalId id) const {
    const Local& l = fn_.locals.at(static_cast<size_t>(id));
    if (l.is_pointer) return std::string(c_elem_type(l.type)) + "*";
    if (l.is_mask) return "uint8_t";
    return c_type(l.type);
  }

  std::string expr(const ExprP& e) const {
    switch (e->kind) {
      case Expr::Kind::Lit:
        switch (e->lit.type) {
          case Scalar::I64:
            if (e->lit.integer == INT64_MIN) return "INT64_MIN";
            return "int64_t(" + std::to_string(e->lit.integer) + ")";
          case Scalar::Bool:
            return e->lit.boolean ? "true" : "false";
          default:
            return real_literal(e->lit.real, e->lit.type);
        }
      case Expr::Kind::Local:
        return name(e->local);
      case Expr::Kind::Load: {
        std::string s = name(e->local) + "[" + expr(e->args[0]) + "]";
        return e->type == Scalar::Bool ? "(" + s + " != 0)" : s;
      }
      case Expr::Kind::MaskIs:
        return "(" + expr(e->args[0]) + " == " + std::to_string(e->lit.integer) + ")";
      case Expr::Kind::Prim:
        return prim_expr(*e);
    }
    return "0";
  }
  std::string prim_expr(const Expr& e) const {
    auto a = [&](size_t k) { return expr(e.args.at(k)); };
    const Scalar t0 = e.args.empty() ? Scalar::F64 : e.args[0]->type;
    auto infix = [&](const char* op) { return "(" + a(0) + " " + op + " " + a(1) + ")"; };
    switch (e.prim) {
      case Prim::Add:
        return infix("+");
      case Prim::Sub:
        return infix("-");
      case Prim::Mul:
        return infix("*");
      case Prim::Div:
        return infix("/");
      case Prim::Neg:
        return "(-" + a(0) + ")";
      case Prim::Lt:
        return infix("<");
      case Prim::Le:
        return infix("<=");
      case Prim::Gt:
        return infix(">");
      case Prim::Ge:
        return infix(">=");
      case Prim::Eq:
        return infix("==");
      case Prim::Ne:
        return infix("!=");
      case Prim::And:
        return infix("&&");
      case Prim::Or:
        return infix("||");
      case Prim::Not:
        return "(!" + a(0) + ")";
      case Prim::Select:
        return "(" + a(0) + " ? " + a(1) + " : " + a(2) + ")";
      case Prim::ToF64:
        return "double(" + a(0) + ")";
      case Prim::ToF32:
        return "float(" + a(0) + ")";
      case Prim::ToI64:
        return "int64_t(" + a(0) + ")";  // from i64 or bool; reals use CheckedInt
      case Prim::StopGradient:
        return a(0);
      case Prim::Max:
        return t0 == Scalar::I64 ? "cot_rt::max_i64(" + a(0) + ", " + a(1) + ")"
                                 : "cot_rt::max(" + a(0) + ", " + a(1) + ")";
      case Prim::Min:
        return t0 == Scalar::I64 ? "cot_rt::min_i64(" + a(0) + ", " + a(1) + ")"
                                 : "cot_rt::min(" + a(0) + ", " + a(1) + ")";
      default: {
        // Elementwise real functions: cot_rt::NAME (prims/scalar_math.h's convention), or in a
        // loop marked for vector lanes cot_vec::NAME where libmvec has a vector version.
        const std::string_view fn = prim_info(e.prim).name;
        const bool vector = in_lanes_ > 0 && has_vector_variant(e.prim);
        std::string s = (vector ? "cot_vec::" : "cot_rt::") + std::string(fn) + "(";
        for (size_t k = 0; k < e.args.size(); ++k) s += (k > 0 ? ", " : "") + a(k);
        return s + ")";
      }
    }
  }

  void body(const Body& b) {
    for (const Stmt& s : b) std::visit([&](const auto& op) { stmt(op); }, s.op);
  }
  void nested(const Body& b) {
    ++indent_;
    body(b);
    --indent_;
  }
  std::string fail_call(int site, const std::vector<std::string>& values) const {
    std::string s = "return cot_rt::fail(ctx, " + std::to_string(site) + ", {";
    for (size_t k = 0; k < values.size(); ++k) s += (k > 0 ? ", " : "") + values[k];
    return s + "});";
  }

  void stmt(const Declare& d) {
    line(local_type(d.local) + " " + name(d.local) + " = " + (d.value ? expr(d.value) : "{}") +
         ";");
  }
  void stmt(const Assign& a) { line(name(a.local) + " = " + expr(a.value) + ";"); }
  void stmt(const Store& s) {
    const Local& p = fn_.locals.at(static_cast<size_t>(s.pointer));
    std::string v = expr(s.value);
    if (p.type == Scalar::Bool) v = "uint8_t(" + v + ")";
    line(name(s.pointer) + "[" + expr(s.index) + "] = " + v + ";");
  }
  void stmt(const CheckedInt& c) {
    std::vector<std::string> args;
    for (const ExprP& e : c.args) args.push_back(expr(e));
    const std::string out = name(c.local);
    line("int64_t " + out + ";");
    std::string call;
    std::vector<std::string> report = args;
    switch (c.prim) {
      case Prim::Add:
        call = "cot_rt::add_i64(" + args[0] + ", " + args[1] + ", &" + out + ")";
        break;
      case Prim::Sub:
        call = "cot_rt::sub_i64(" + args[0] + ", " + args[1] + ", &" + out + ")";
        break;
      case Prim::Mul:
        call = "cot_rt::mul_i64(" + args[0] + ", " + args[1] + ", &" + out + ")";
        break;
      case Prim::Neg:
        call = "cot_rt::neg_i64(" + args[0] + ", &" + out + ")";
        break;
      case Prim::Abs:
        call = "cot_rt::abs_i64(" + args[0] + ", &" + out + ")";
        break;
      case Prim::FloorDiv:
      case Prim::Mod:
      case Prim::ExactDiv: {
        const char* k = c.prim == Prim::FloorDiv ? "Floor" : c.prim == Prim::Mod ? "Mod" : "Exact";
        call = std::string("cot_rt::div_i64(cot_rt::DivKind::") + k + ", " + args[0] + ", " +
               args[1] + ", &" + out + ")";
        break;
      }
      case Prim::ToI64:
        call = "cot_rt::real_to_i64(double(" + args[0] + "), &" + out + ")";
        report = {"cot_rt::bits(double(" + args[0] + "))"};
        break;
      default:
        call = "false";
        break;
    }
    line("if (!" + call + ") " + fail_call(c.site, report));
  }
  void stmt(const For& f) {
    const std::string i = name(f.var);
    const std::string head = "for (int64_t " + i + " = " + expr(f.begin) + "; " + i + " < " +
                             expr(f.end) + "; ++" + i + ")";
    // Worth a fork and join only with enough work (a few tens of microseconds).
    const int64_t per_iteration = std::max<int64_t>(1, work(f.body));
    const auto trips = as_i64(f.end);
    // A long generator whose iterations are flat runs in vector lanes (and calls the vector
    // math of codegen/vector_math.h); short ones keep the scalar functions' rounding.
    const bool cannot_fail = !may_fail(f.body);
    const bool lanes =
        (f.parallel || f.independent) && runs_long(f) && !has_loop_or_buffer(f.body) && cannot_fail;
    if (!f.parallel || (trips && saturating_mul(*trips, per_iteration) < kParallelWork)) {
      const bool simd = f.simd || lanes || f.sum_into >= 0;
      if (f.simd || lanes) {
        line("#pragma omp simd");
      } else if (f.sum_into >= 0) {
        line("#pragma omp simd reduction(+:" + name(f.sum_into) + ")");
      }
      line(head + " {");
      if (f.parallel) {
        // Sequential after all: the body's buffers still come from the thread arena.
        ++indent_;
        thread_arena_decl(f);
        --indent_;
      }
      in_lanes_ += simd ? 1 : 0;
      nested(f.body);
      in_lanes_ -= simd ? 1 : 0;
      line("}");
      return;
    }
    // Enough trips for the work (a division, so nothing overflows at run time).
    const int64_t min_trips = (kParallelWork + per_iteration - 1) / per_iteration;
    const std::string threads =
        "num_threads(ctx->threads > 0 ? ctx->threads : omp_get_max_threads()) if((" + expr(f.end) +
        " - " + expr(f.begin) + ") >= " + std::to_string(min_trips) + ")";
    std::string pointers;
    for (LocalId p : OuterPointers(fn_).of(f.body))
      pointers += (pointers.empty() ? "" : ", ") + name(p);
    if (f.thread_arena_bytes == 0 && cannot_fail) {
      // Nothing to report: a plain worksharing loop, which the C++ compiler vectorizes; the
      // pointers copied into each thread so that it knows they do not change.
      line("#pragma omp parallel " + threads +
           (pointers.empty() ? "" : " firstprivate(" + pointers + ")"));
      line("{");
      ++indent_;
      thread_arena_decl(f);
      if (lanes) {
        // In lanes, an iteration's rounding depends on where it falls in its thread's range (a
        // full vector, the shorter vectors of the epilogue, or the scalar tail, which call
        // different versions of exp, log, ...). Threads share out fixed blocks of kLaneBlock
        // iterations, each run in lanes, so that the place of every iteration, and its value,
        // does not depend on the number of threads (docs/design.md, "Parallel loops").
        const std::string b = i + "_block", lo = i + "_lo", hi = i + "_hi";
        const std::string begin = "int64_t(" + expr(f.begin) + ")";
        const std::string end = "int64_t(" + expr(f.end) + ")";
        const std::string block = std::to_string(kLaneBlock);
        line("#pragma omp for schedule(static)");
        line("for (int64_t " + b + " = 0; " + b + " < (" + end + " - " + begin + " + " + block +
             " - 1) / " + block + "; ++" + b + ") {");
        ++indent_;
        line("const int64_t " + lo + " = " + begin + " + " + b + " * " + block + ";");
        line("const int64_t " + hi + " = " + end + " - " + lo + " < " + block + " ? " + end +
             " : " + lo + " + " + block + ";");
        line("#pragma omp simd");
        line("for (int64_t " + i + " = " + lo + "; " + i + " < " + hi + "; ++" + i + ") {");
        ++in_lanes_;
        nested(f.body);
        --in_lanes_;
        line("}");
        --indent_;
        line("}");
      } else {
        line("#pragma omp for schedule(static)");
        line(head + " {");
        nested(f.body);
        line("}");
      }
      --indent_;
      line("}");
      return;
    }
    // OpenMP: each thread its own arena and context; the earliest failing iteration wins.
    const std::string tag = std::to_string(f.arena);
    line("{");
    ++indent_;
    line("int64_t first_fail" + tag + " = INT64_MAX;");
    line("int fail_code" + tag + " = 0;");
    line("cot_ctx fail_ctx" + tag + " = *ctx;");
    line("#pragma omp parallel " + threads);
    line("{");
    ++indent_;
    thread_arena_decl(f);
    line("#pragma omp for schedule(static)");
    line(head + " {");
    ++indent_;
    line("int64_t seen;");
    line("#pragma omp atomic read");
    line("seen = first_fail" + tag + ";");
    line("if (" + i + " > seen) continue;");
    line("cot_ctx thread_ctx = *ctx;");
    const std::string captures = pointers.empty() ? "&" : "&, " + pointers;
    line("const int code = [" + captures + "]() -> int {");
    ++indent_;
    line("cot_ctx* ctx = &thread_ctx;");
    if (f.thread_arena_bytes > 0) {
      line("if (thread_arena" + tag + " == nullptr) return cot_rt::fail(ctx, 0, {});");
    }
    body(f.body);
    line("return 0;");
    --indent_;
    line("}();");
    line("if (code != 0) {");
    line("#pragma omp critical");
    line("  {");
    line("    if (" + i + " < first_fail" + tag + ") {");
    line("      fail_code" + tag + " = code;");
    line("      fail_ctx" + tag + " = thread_ctx;");
    line("      #pragma omp atomic write");
    line("      first_fail" + tag + " = " + i + ";");
    line("    }");
    line("  }");
    line("}");
    --indent_;
    line("}");
    --indent_;
    line("}");
    line("if (fail_code" + tag + " != 0) { *ctx = fail_ctx" + tag + "; return fail_code" + tag +
         "; }");
    --indent_;
    line("}");
  }
  // The per-thread arena of a parallel loop's buffers.
  void thread_arena_decl(const For& f) {
    const std::string tag = std::to_string(f.arena);
    if (f.thread_arena_bytes > 0) {
      line("cot_rt::heap thread_heap" + tag + ";");
      line("char* thread_arena" + tag + " = (char*)thread_heap" + tag + ".alloc(" +
           std::to_string(f.thread_arena_bytes) + ");");
      if (!f.parallel) return;
    } else {
      line("char* thread_arena" + tag + " = nullptr;  // only buffers without elements");
      line("(void)thread_arena" + tag + ";");
    }
  }
  // a * b for counts, at most kMaxWork (no overflow).
  static int64_t saturating_mul(int64_t a, int64_t b) {
    int64_t r = 0;
    return __builtin_mul_overflow(a, b, &r) || r > kMaxWork ? kMaxWork : r;
  }
  // A rough count of the statements one run of `b` executes (loops of unknown trip count as
  // 16 iterations): enough to tell a loop worth running in parallel from one that is not.
  static int64_t work(const Body& b) {
    int64_t w = 0;
    for (const Stmt& s : b) {
      int64_t here = 1;
      if (const auto* f = std::get_if<For>(&s.op)) {
        auto n = as_i64(f->end);
        here = saturating_mul(std::max<int64_t>(1, n.value_or(16)), work(f->body));
      } else if (const auto* l = std::get_if<Forever>(&s.op)) {
        here = saturating_mul(16, work(l->body));
      } else if (const auto* i = std::get_if<If>(&s.op)) {
        here = 1 + std::max(work(i->then_body), work(i->else_body));
      } else if (const auto* c = std::get_if<Copy>(&s.op)) {
        here = std::max<int64_t>(1, as_i64(c->count).value_or(16) / 8);
      } else if (const auto* c = std::get_if<Combine>(&s.op)) {
        here = std::max<int64_t>(1, as_i64(c->count).value_or(16));
      } else if (const auto* c = std::get_if<Fill>(&s.op)) {
        here = std::max<int64_t>(1, as_i64(c->count).value_or(16) / 8);
      }
      w = std::min<int64_t>(w + here, kMaxWork);
    }
    return w;
  }

  void stmt(const Forever& f) {
    line("for (;;) {");
    nested(f.body);
    line("}");
  }
  void stmt(const Break&) { line("break;"); }
  void stmt(const If& i) {
    line("if (" + expr(i.cond) + ") {");
    nested(i.then_body);
    if (!i.else_body.empty()) {
      line("} else {");
      nested(i.else_body);
    }
    line("}");
  }
  void stmt(const Fail& f) {
    std::vector<std::string> values;
    for (const ExprP& e : f.values) values.push_back(expr(e));
    line(fail_call(f.site, values));
  }
  void stmt(const Alloc& a) {
    const Local& p = fn_.locals.at(static_cast<size_t>(a.pointer));
    const std::string t = c_elem_type(p.type);
    const std::string n = name(a.pointer);
    if (a.on_stack) {
      line(t + " " + n + "_array[" + expr(a.count) + "];");
      line(t + "* " + n + " = " + n + "_array;");
      return;
    }
    if (a.arena_offset >= 0) {
      const std::string base =
          a.arena == 0 ? std::string("arena") : "thread_arena" + std::to_string(a.arena);
      line(t + "* " + n + " = (" + t + "*)(" + base + " + " + std::to_string(a.arena_offset) +
           ");");
      return;
    }
    line("cot_rt::heap " + n + "_heap;");
    line(t + "* " + n + " = (" + t + "*)" + n + "_heap.alloc((" + expr(a.count) + ") * " +
         std::to_string(element_bytes(p.type)) + ");");
    line("if (" + n + " == nullptr) return cot_rt::fail(ctx, 0, {});");
  }
  void stmt(const View& v) {
    line(local_type(v.pointer) + " " + name(v.pointer) + " = " + name(v.base) + " + " +
         expr(v.offset) + ";");
  }
  void stmt(const Copy& c) {
    const Local& p = fn_.locals.at(static_cast<size_t>(c.dst));
    const std::string n = expr(c.count);
    if (as_i64(c.count) == int64_t{1}) {
      line(name(c.dst) + "[" + expr(c.dst_offset) + "] = " + name(c.src) + "[" +
           expr(c.src_offset) + "];");
      return;
    }
    line("if (" + n + " > 0) std::memcpy(" + name(c.dst) + " + " + expr(c.dst_offset) + ", " +
         name(c.src) + " + " + expr(c.src_offset) + ", size_t(" + n + ") * " +
         std::to_string(element_bytes(p.type)) + ");");
  }
  void stmt(const Fill& f) {
    const Local& p = fn_.locals.at(static_cast<size_t>(f.dst));
    std::string v = expr(f.value);
    if (p.type == Scalar::Bool) v = "uint8_t(" + v + ")";
    line("for (int64_t k = 0; k < " + expr(f.count) + "; ++k) " + name(f.dst) + "[" +
         expr(f.offset) + " + k] = " + v + ";");
  }
  void stmt(const Combine& c) {
    const Local& p = fn_.locals.at(static_cast<size_t>(c.dst));
    const std::string d = name(c.dst) + "[" + expr(c.dst_offset) + " + k]";
    const std::string s = name(c.src) + "[" + expr(c.src_offset) + " + k]";
    line("for (int64_t k = 0; k < " + expr(c.count) + "; ++k) {");
    ++indent_;
    if (p.type == Scalar::I64 && c.how == ir::ReduceKind::Sum) {
      line("if (!cot_rt::add_i64(" + d + ", " + s + ", &" + d + ")) " + fail_call(c.site, {d, s}));
    } else if (c.how == ir::ReduceKind::Sum) {
      line(d + " = " + d + " + " + s + ";");
    } else if (p.type == Scalar::I64) {
      line(d + " = cot_rt::" + (c.how == ir::ReduceKind::Max ? "max_i64(" : "min_i64(") + d + ", " +
           s + ");");
    } else {
      line(d + " = cot_rt::" + (c.how == ir::ReduceKind::Max ? "max(" : "min(") + d + ", " + s +
           ");");
    }
    --indent_;
    line("}");
  }
  void stmt(const Swap& s) {
    line("{ auto swapped = " + name(s.a) + "; " + name(s.a) + " = " + name(s.b) + "; " + name(s.b) +
         " = swapped; }");
  }
  void stmt(const StackInit& s) {
    line("cot_rt::stack " + name(s.pointer) + "_stack;");
    line(local_type(s.pointer) + " " + name(s.pointer) + " = nullptr;");
  }
  void stmt(const StackGrow& g) {
    const Local& p = fn_.locals.at(static_cast<size_t>(g.pointer));
    const std::string n = name(g.pointer);
    line("if (!" + n + "_stack.grow((" + expr(g.count) + ") * " +
         std::to_string(element_bytes(p.type)) + ")) return cot_rt::fail(ctx, 0, {});");
    line(n + " = (" + local_type(g.pointer) + ")" + n + "_stack.p;");
  }

  const LoopFunction& fn_;
  Linkage linkage_;
  std::ostringstream out_;
  int indent_ = 0;
  int in_lanes_ = 0;  // inside a loop marked `omp simd`
};

}  // namespace

const char* c_elem_type(Scalar t) {
  return t == Scalar::Bool ? "uint8_t" : c_type(t);
}

std::string emit_function(const LoopFunction& fn, Linkage linkage) {
  return Emitter(fn, linkage).run();
}

std::string emit_translation_unit(const std::vector<const LoopFunction*>& fns, Linkage linkage) {
  std::string s = "// Generated by Cotangent; do not edit.\n";
  s += kRuntimeText;
  s += "\n#include <limits>\n#ifdef _OPENMP\n#include <omp.h>\n#else\n"
       "static inline int omp_get_max_threads() { return 1; }\n#endif\n\n";
  for (const LoopFunction* f : fns) s += emit_function(*f, linkage) + "\n";
  return s;
}

}  // namespace cot::codegen
