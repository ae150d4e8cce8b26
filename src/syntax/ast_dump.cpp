#include "syntax/ast_dump.h"

#include <charconv>

namespace cot::ast {
namespace {

// Shortest text that reads back as the same double, always recognizable as a real.
std::string real_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 'n': inf and nan
  return s;
}

const char* scalar_text(ScalarKind k) {
  switch (k) {
    case ScalarKind::F64:
      return "f64";
    case ScalarKind::F32:
      return "f32";
    case ScalarKind::I64:
      return "i64";
    case ScalarKind::Bool:
      return "bool";
  }
  return "?";
}

class Dumper {
 public:
  std::string out;

  void expr(const Expr& e) {
    std::visit([this](const auto& n) { node(n); }, e.node);
  }

  void type(const TypeAst& t) {
    if (t.is_tuple) {
      out += "(tuple";
      for (const TypeAst& el : t.elems) {
        out += ' ';
        type(el);
      }
      out += ')';
    } else if (t.dims.empty()) {
      out += scalar_text(t.elem);
    } else {
      out += '(';
      out += scalar_text(t.elem);
      exprs(t.dims);
      out += ')';
    }
  }

  void pattern(const Pattern& p) {
    switch (p.kind) {
      case Pattern::Kind::Name:
        out += p.name;
        break;
      case Pattern::Kind::Wildcard:
        out += '_';
        break;
      case Pattern::Kind::Tuple:
        out += "(tuple";
        for (const Pattern& el : p.elems) {
          out += ' ';
          pattern(el);
        }
        out += ')';
        break;
    }
  }

  void fnref(const FnRef& f) {
    if (!f.deriv) {
      out += f.name;
      return;
    }
    out += '(';
    out += to_string(*f.deriv);
    out += ' ';
    if (f.inner) fnref(*f.inner);
    for (const auto& [name, span] : f.wrt) {
      out += ' ';
      out += name;
    }
    out += ')';
  }

  void def(const FnDef& d) {
    out += "(def " + d.name + " (";
    for (size_t i = 0; i < d.params.size(); ++i) {
      if (i > 0) out += ' ';
      out += "(" + d.params[i].name + ' ';
      type(d.params[i].type);
      out += ')';
    }
    out += ") ";
    type(d.ret);
    out += ' ';
    if (d.body) expr(*d.body);
    out += ')';
  }

 private:
  // Each element preceded by a space.
  void exprs(const std::vector<ExprPtr>& es) {
    for (const ExprPtr& e : es) {
      out += ' ';
      if (e) expr(*e);
    }
  }

  void binders(const std::vector<Binder>& bs) {
    out += '(';
    for (size_t i = 0; i < bs.size(); ++i) {
      if (i > 0) out += ' ';
      out += bs[i].name;
      if (bs[i].extent) {
        out += ':';
        expr(*bs[i].extent);
      }
    }
    out += ')';
  }

  void opt(const ExprPtr& e) {
    if (e) expr(*e);
  }

  void node(const IntLit& n) { out += std::to_string(n.value); }
  void node(const RealLit& n) { out += real_text(n.value); }
  void node(const BoolLit& n) { out += n.value ? "true" : "false"; }
  void node(const Name& n) { out += n.name; }
  void node(const Unary& n) {
    out += std::string("(") + to_string(n.op) + ' ';
    opt(n.operand);
    out += ')';
  }
  void node(const Binary& n) {
    out += std::string("(") + to_string(n.op) + ' ';
    opt(n.lhs);
    out += ' ';
    opt(n.rhs);
    out += ')';
  }
  void node(const Call& n) {
    out += "(call ";
    fnref(n.callee);
    exprs(n.args);
    out += ')';
  }
  void node(const Index& n) {
    out += "(index ";
    opt(n.base);
    exprs(n.indices);
    out += ')';
  }
  void node(const Tuple& n) {
    out += "(tuple";
    exprs(n.elems);
    out += ')';
  }
  void node(const Block& n) {
    out += "(block";
    for (const Let& l : n.lets) {
      out += " (let ";
      pattern(l.pattern);
      out += ' ';
      opt(l.value);
      out += ')';
    }
    out += ' ';
    opt(n.result);
    out += ')';
  }
  void node(const Iverson& n) {
    out += "(iverson ";
    opt(n.cond);
    out += ')';
  }
  void node(const For& n) {
    out += "(for ";
    binders(n.binders);
    out += ' ';
    opt(n.body);
    out += ')';
  }
  void node(const Reduce& n) {
    out += std::string("(") + to_string(n.kind) + ' ';
    binders(n.binders);
    out += ' ';
    opt(n.body);
    out += ')';
  }
  void node(const Loop& n) {
    out += "(loop ";
    pattern(n.state);
    out += ' ';
    opt(n.init);
    if (n.count) {
      out += " (for " + n.iter + ' ';
      expr(*n.count);
    } else {
      out += " (while ";
      opt(n.cond);
    }
    out += ") ";
    opt(n.body);
    out += ')';
  }
  void node(const If& n) {
    out += "(if ";
    opt(n.cond);
    out += ' ';
    opt(n.then_branch);
    out += ' ';
    opt(n.else_branch);
    out += ')';
  }
  void node(const Accum& n) {
    out += "(accum (";
    for (size_t i = 0; i < n.shape.size(); ++i) {
      if (i > 0) out += ' ';
      opt(n.shape[i]);
    }
    out += ") ";
    binders(n.binders);
    out += ' ';
    opt(n.body);
    out += ')';
  }
};

}  // namespace

std::string dump(const Expr& e) {
  Dumper d;
  d.expr(e);
  return std::move(d.out);
}

std::string dump(const TypeAst& t) {
  Dumper d;
  d.type(t);
  return std::move(d.out);
}

std::string dump(const Pattern& p) {
  Dumper d;
  d.pattern(p);
  return std::move(d.out);
}

std::string dump(const FnRef& f) {
  Dumper d;
  d.fnref(f);
  return std::move(d.out);
}

std::string dump(const FnDef& def) {
  Dumper d;
  d.def(def);
  return std::move(d.out);
}

std::string dump(const Module& m) {
  Dumper d;
  for (const FnDef& def : m.defs) {
    d.def(def);
    d.out += '\n';
  }
  return std::move(d.out);
}

}  // namespace cot::ast
