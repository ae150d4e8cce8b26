#include "codegen/loop_ir_printer.h"

#include <cctype>
#include <cstdio>
#include <string_view>
#include <type_traits>
#include <variant>

namespace cot::codegen {

namespace {

std::string local_name(const LoopFunction& fn, LocalId id) {
  if (id < 0 || static_cast<size_t>(id) >= fn.locals.size()) return "?" + std::to_string(id);
  std::string s = "v" + std::to_string(id) + "_";
  for (char c : fn.locals[static_cast<size_t>(id)].name) {
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  }
  return s;
}

std::string local_type(const LoopFunction& fn, LocalId id) {
  const Local& l = fn.locals.at(static_cast<size_t>(id));
  if (l.is_mask) return "mask";
  return std::string(to_string(l.type)) + (l.is_pointer ? "*" : "");
}

std::string literal(const ir::Literal& l) {
  switch (l.type) {
    case Scalar::I64:
      return std::to_string(l.integer);
    case Scalar::Bool:
      return l.boolean ? "true" : "false";
    default: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", l.real);
      return buf;
    }
  }
}

const char* infix(Prim p) {
  switch (p) {
    case Prim::Add:
      return "+";
    case Prim::Sub:
      return "-";
    case Prim::Mul:
      return "*";
    case Prim::Div:
      return "/";
    case Prim::Lt:
      return "<";
    case Prim::Le:
      return "<=";
    case Prim::Gt:
      return ">";
    case Prim::Ge:
      return ">=";
    case Prim::Eq:
      return "==";
    case Prim::Ne:
      return "!=";
    case Prim::And:
      return "&&";
    case Prim::Or:
      return "||";
    default:
      return nullptr;
  }
}

// Prints one statement (and its nested bodies) at `indent`.
class StmtPrinter {
 public:
  StmtPrinter(const LoopFunction& fn, std::string& out) : fn_(fn), out_(out) {}

  void body(const Body& b, int indent) {
    for (const Stmt& s : b) {
      indent_ = indent;
      std::visit([&](const auto& op) { stmt(op); }, s.op);
    }
  }

 private:
  std::string e(const ExprP& x) const { return x ? print_loop_expr(fn_, x) : "{}"; }
  std::string n(LocalId id) const { return local_name(fn_, id); }
  void line(const std::string& s) {
    out_.append(static_cast<size_t>(indent_) * 2, ' ');
    out_ += s;
    out_ += '\n';
  }
  void nested(const Body& b) {
    const int at = indent_;
    body(b, at + 1);
    indent_ = at;
  }

  void stmt(const Declare& d) {
    line(local_type(fn_, d.local) + " " + n(d.local) + " = " + e(d.value));
  }
  void stmt(const Assign& a) { line(n(a.local) + " = " + e(a.value)); }
  void stmt(const Store& s) { line(n(s.pointer) + "[" + e(s.index) + "] = " + e(s.value)); }
  void stmt(const CheckedInt& c) {
    std::string args;
    for (const ExprP& a : c.args) args += (args.empty() ? "" : ", ") + e(a);
    line("i64 " + n(c.local) + " = checked " + std::string(prim_info(c.prim).name) + "(" + args +
         ") else fail " + std::to_string(c.site));
  }
  void stmt(const For& f) {
    std::string s = "for " + n(f.var) + " in [" + e(f.begin) + ", " + e(f.end) + ")";
    if (f.parallel) s += " parallel";
    if (f.independent) s += " independent";
    if (f.simd) s += " simd";
    if (f.sum_of >= 0) s += " sum_of " + n(f.sum_of) + (f.sum_masked ? " masked" : "");
    if (f.sum_into >= 0) s += " sum_into " + n(f.sum_into);
    if (f.thread_arena_bytes > 0) s += " thread_arena " + std::to_string(f.thread_arena_bytes);
    line(s);
    nested(f.body);
  }
  void stmt(const Forever& f) {
    line("forever");
    nested(f.body);
  }
  void stmt(const Break&) { line("break"); }
  void stmt(const If& i) {
    line("if " + e(i.cond));
    nested(i.then_body);
    if (!i.else_body.empty()) {
      line("else");
      nested(i.else_body);
    }
  }
  void stmt(const Fail& f) {
    std::string values;
    for (const ExprP& v : f.values) values += (values.empty() ? "" : ", ") + e(v);
    line("fail " + std::to_string(f.site) + " (" + values + ")");
  }
  void stmt(const Alloc& a) {
    std::string where = a.on_stack            ? "stack"
                        : a.arena_offset >= 0 ? "arena " + std::to_string(a.arena) + " at " +
                                                    std::to_string(a.arena_offset)
                                              : "heap";
    line(local_type(fn_, a.pointer) + " " + n(a.pointer) + " = alloc " + e(a.count) + " (" + where +
         ")");
  }
  void stmt(const View& v) {
    line(local_type(fn_, v.pointer) + " " + n(v.pointer) + " = " + n(v.base) + " + " + e(v.offset));
  }
  void stmt(const Copy& c) {
    line("copy " + n(c.dst) + "[" + e(c.dst_offset) + "] <- " + n(c.src) + "[" + e(c.src_offset) +
         "] count " + e(c.count));
  }
  void stmt(const Fill& f) {
    line("fill " + n(f.dst) + "[" + e(f.offset) + "] count " + e(f.count) + " = " + e(f.value));
  }
  void stmt(const Combine& c) {
    const char* how = c.how == ir::ReduceKind::Sum   ? "+="
                      : c.how == ir::ReduceKind::Max ? "max="
                                                     : "min=";
    line("combine " + n(c.dst) + "[" + e(c.dst_offset) + "] " + how + " " + n(c.src) + "[" +
         e(c.src_offset) + "] count " + e(c.count) +
         (c.site >= 0 ? " else fail " + std::to_string(c.site) : ""));
  }
  void stmt(const Swap& s) { line("swap " + n(s.a) + ", " + n(s.b)); }
  void stmt(const StackInit& s) {
    line(local_type(fn_, s.pointer) + " " + n(s.pointer) + " = stack");
  }
  void stmt(const StackGrow& g) { line("grow " + n(g.pointer) + " to " + e(g.count)); }

  const LoopFunction& fn_;
  std::string& out_;
  int indent_ = 0;
};

}  // namespace

std::string print_loop_expr(const LoopFunction& fn, const ExprP& e) {
  switch (e->kind) {
    case Expr::Kind::Lit:
      return literal(e->lit);
    case Expr::Kind::Local:
      return local_name(fn, e->local);
    case Expr::Kind::Load:
      return local_name(fn, e->local) + "[" + print_loop_expr(fn, e->args.at(0)) + "]";
    case Expr::Kind::MaskIs:
      return "(" + print_loop_expr(fn, e->args.at(0)) + " is " + std::to_string(e->lit.integer) +
             ")";
    case Expr::Kind::Prim:
      break;
  }
  if (const char* op = infix(e->prim); op != nullptr && e->args.size() == 2) {
    return "(" + print_loop_expr(fn, e->args[0]) + " " + op + " " +
           print_loop_expr(fn, e->args[1]) + ")";
  }
  if (e->prim == Prim::Neg) return "(-" + print_loop_expr(fn, e->args.at(0)) + ")";
  if (e->prim == Prim::Not) return "(!" + print_loop_expr(fn, e->args.at(0)) + ")";
  if (e->prim == Prim::Select) {
    return "(" + print_loop_expr(fn, e->args.at(0)) + " ? " + print_loop_expr(fn, e->args.at(1)) +
           " : " + print_loop_expr(fn, e->args.at(2)) + ")";
  }
  std::string s = std::string(prim_info(e->prim).name) + "(";
  for (size_t k = 0; k < e->args.size(); ++k) {
    s += (k > 0 ? ", " : "") + print_loop_expr(fn, e->args[k]);
  }
  return s + ")";
}

std::string print_loop_body(const LoopFunction& fn, const Body& body, int indent) {
  std::string out;
  StmtPrinter(fn, out).body(body, indent);
  return out;
}

std::string print_loop_function(const LoopFunction& fn) {
  std::string out = "loop function " + fn.name + "\n";
  auto ports = [&](const char* what, const std::vector<Port>& ps) {
    for (const Port& p : ps) {
      out += std::string("  ") + what + " " + std::string(to_string(p.type)) + "* " +
             local_name(fn, p.pointer) + " (" +
             (p.count >= 0 ? std::to_string(p.count) : std::string("run-time")) + " elements)\n";
    }
  };
  ports("in", fn.inputs);
  ports("out", fn.outputs);
  if (fn.arena_bytes > 0) out += "  arena " + std::to_string(fn.arena_bytes) + " bytes\n";
  out += print_loop_body(fn, fn.body, 1);
  return out;
}

}  // namespace cot::codegen
