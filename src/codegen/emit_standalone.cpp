#include "codegen/emit_standalone.h"

#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/emit_cpp.h"

namespace cot::codegen {

namespace {

// A C string literal of `s` that any C or C++ compiler reads back byte for byte: quotes,
// backslashes and `?` (trigraphs) escaped, every byte outside printable ASCII in octal.
std::string literal(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      const char octal[] = {'\\', static_cast<char>('0' + (c >> 6)),
                            static_cast<char>('0' + ((c >> 3) & 7)),
                            static_cast<char>('0' + (c & 7)), '\0'};
      out += octal;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// A site's message as pieces of text and run-time values. The generated code prints it with a
// format of only "%s" and "%lld" (text(), below): no text from the program or its file name is
// ever a printf format.
struct Message {
  struct Piece {
    bool is_value = false;
    std::string text;  // the text, or the value's C expression
  };
  std::vector<Piece> pieces;

  void add(std::string text) {
    if (!pieces.empty() && !pieces.back().is_value) {
      pieces.back().text += text;
    } else {
      pieces.push_back({false, std::move(text)});
    }
  }
  void value(int k) { pieces.push_back({true, "(long long)v[" + std::to_string(k) + "]"}); }

  // "std::snprintf(buf, n, FORMAT, ARGS...);"
  std::string snprintf_call() const {
    std::string format, args;
    for (const Piece& p : pieces) {
      format += p.is_value ? "%lld" : "%s";
      args += ", " + (p.is_value ? p.text : literal(p.text));
    }
    return "std::snprintf(buf, n, " + literal(format) + args + ");";
  }
};

void add_shape(const Site& s, Message& m, int first_runtime) {
  m.add("[");
  int next = first_runtime;
  for (size_t d = 0; d < s.shape.size(); ++d) {
    if (d > 0) m.add(", ");
    if (s.shape[d] == -2) {
      m.add("?");  // a run-time dim past those the site reports
    } else if (s.shape[d] == -1) {
      m.value(next++);
    } else {
      m.add(std::to_string(s.shape[d]));
    }
  }
  m.add("]");
}

// The interpreter's words where the site knows them statically, values filled in at run time.
void add_message(const Site& s, Message& m) {
  switch (s.kind) {
    case Site::Kind::Message:
    case Site::Kind::Overflow:
      m.add(s.message);
      break;
    case Site::Kind::IndexRange:
    case Site::Kind::AccumIndex:
      m.add("index ");
      m.value(0);
      m.add(" is out of range for dimension " + std::to_string(s.dim) + " of " +
            (s.kind == Site::Kind::AccumIndex ? std::string("the accumulated tensor") : s.message) +
            ", which has shape ");
      add_shape(s, m, 2);
      break;
    case Site::Kind::IntPrim:
      m.add("integer overflow or division by zero in `" + std::string(prim_info(s.prim).symbol) +
            "`: operands ");
      m.value(0);
      m.add(" and ");
      m.value(1);
      break;
    case Site::Kind::RealToI64:
      m.add("`i64` of a real that is NaN, infinite or out of the i64 range");
      break;
    case Site::Kind::WhileLimit:
      m.add("the while loop did not finish within ");
      m.value(0);
      m.add(" iterations");
      break;
    case Site::Kind::SavedStates:
      m.add("the saved states of " + s.message + " in a loop of ");
      m.value(0);
      m.add(" or more iterations would make a tensor of more than the limit of " +
            std::to_string(s.shape.empty() ? 0 : s.shape[0]) + " elements");
      break;
    case Site::Kind::TensorLimit:
      m.add("a tensor of shape ");
      add_shape(s, m, 0);
      m.add(" cannot be built: a dimension is negative, its element count overflows, or it has "
            "more than the limit of " +
            std::to_string(s.limit) + " elements");
      break;
    case Site::Kind::NegativeExtent:
      m.add("the extent " + s.message + " is negative (");
      m.value(0);
      m.add(")");
      break;
  }
}

// The C identifier of a leaf: its position, then its label with `.` as `_` ("x.0" -> in3_x_0).
// The position alone makes it unique, and the prefix keeps it apart from every keyword, macro
// and name of the ABI (sizes, threads, message, message_size).
std::string leaf_identifier(const char* prefix, size_t k, const std::string& label) {
  std::string id = prefix + std::to_string(k);
  if (label.empty()) return id;
  id += '_';
  for (char c : label) id += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return id;
}

// Names the generated source defines beside the C function (docs/design.md §10, "Ahead of
// time").
constexpr const char* kEntryName = "cot_entry";
constexpr const char* kMessageName = "cot_message";

// C and C++ keywords and alternative tokens: an identifier may be none of them.
constexpr std::string_view kKeywords[] = {"alignas",
                                          "alignof",
                                          "and",
                                          "and_eq",
                                          "asm",
                                          "auto",
                                          "bitand",
                                          "bitor",
                                          "bool",
                                          "break",
                                          "case",
                                          "catch",
                                          "char",
                                          "char8_t",
                                          "char16_t",
                                          "char32_t",
                                          "class",
                                          "compl",
                                          "concept",
                                          "const",
                                          "consteval",
                                          "constexpr",
                                          "constinit",
                                          "const_cast",
                                          "continue",
                                          "co_await",
                                          "co_return",
                                          "co_yield",
                                          "decltype",
                                          "default",
                                          "delete",
                                          "do",
                                          "double",
                                          "dynamic_cast",
                                          "else",
                                          "enum",
                                          "explicit",
                                          "export",
                                          "extern",
                                          "false",
                                          "float",
                                          "for",
                                          "friend",
                                          "goto",
                                          "if",
                                          "inline",
                                          "int",
                                          "long",
                                          "mutable",
                                          "namespace",
                                          "new",
                                          "noexcept",
                                          "not",
                                          "not_eq",
                                          "nullptr",
                                          "operator",
                                          "or",
                                          "or_eq",
                                          "private",
                                          "protected",
                                          "public",
                                          "register",
                                          "reinterpret_cast",
                                          "requires",
                                          "restrict",
                                          "return",
                                          "short",
                                          "signed",
                                          "sizeof",
                                          "static",
                                          "static_assert",
                                          "static_cast",
                                          "struct",
                                          "switch",
                                          "template",
                                          "this",
                                          "thread_local",
                                          "throw",
                                          "true",
                                          "try",
                                          "typedef",
                                          "typeid",
                                          "typename",
                                          "typeof",
                                          "union",
                                          "unsigned",
                                          "using",
                                          "virtual",
                                          "void",
                                          "volatile",
                                          "wchar_t",
                                          "while",
                                          "xor",
                                          "xor_eq"};

}  // namespace

std::optional<std::string> invalid_c_name(const std::string& name) {
  bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) {
    identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  }
  if (!identifier) return "is not a C identifier";
  for (std::string_view k : kKeywords) {
    if (name == k) return "is a keyword of C or C++";
  }
  // Names that start with `_` are the implementation's. (C++ reserves `__` anywhere as well;
  // the names emit gives start with cot_, which no implementation uses, so `cot_fn_a__b`, from a
  // function a__b, is allowed.)
  if (name[0] == '_') return "is reserved to the C and C++ implementations (it starts with `_`)";
  // Every name the run time defines at file scope starts with cot_ or COT_.
  if (name.rfind("cot_", 0) == 0 || name.rfind("COT_", 0) == 0) {
    const bool emit_scheme = name.find('_', 4) != std::string::npos;  // cot_KIND_FN
    if (!emit_scheme || name.rfind("cot_simd_", 0) == 0 || name.rfind("cot_vec_", 0) == 0 ||
        name.rfind("cot_rt_", 0) == 0 || name.rfind("COT_", 0) == 0) {
      return "is a name of the generated code's run time";
    }
  }
  return std::nullopt;
}

StandaloneSource emit_standalone(const LoopFunction& fn, const StandaloneSignature& sig) {
  // The parameters of the C function.
  std::string params = "const int64_t* sizes";
  std::vector<std::string> inputs, outputs;
  std::string leaves_doc;
  for (size_t k = 0; k < sig.inputs.size(); ++k) {
    const auto& l = sig.inputs[k];
    inputs.push_back(leaf_identifier("in", k, l.name));
    params += ", const " + std::string(c_elem_type(l.type)) + "* " + inputs.back();
    leaves_doc += "//   " + inputs.back() + ": " + l.name + ", " + l.elements + " " +
                  c_elem_type(l.type) + "\n";
  }
  std::string results_doc;
  for (size_t k = 0; k < sig.outputs.size(); ++k) {
    const auto& l = sig.outputs[k];
    outputs.push_back(leaf_identifier("out", k, ""));
    params += ", " + std::string(c_elem_type(l.type)) + "* " + outputs.back();
    results_doc += "//   " + outputs.back() + ": " + l.name + ", " + l.elements + " " +
                   c_elem_type(l.type) + "\n";
  }
  params += ", int threads, char* message, size_t message_size";
  std::string sizes_doc;
  for (size_t k = 0; k < sig.size_names.size(); ++k) {
    sizes_doc += (k > 0 ? ", " : "") + std::string("sizes[") + std::to_string(k) +
                 "] = " + sig.size_names[k];
  }
  if (sizes_doc.empty()) sizes_doc = "none (sizes may be null)";

  StandaloneSource out;
  out.header =
      "// Generated by Cotangent (cotangent emit); do not edit.\n"
      "//\n"
      "// " +
      sig.declaration +
      "\n"
      "//\n"
      "// Names: the C function is cot_fn_FN for a function FN and cot_OP_FN for a derivative\n"
      "// (cot_grad_FN, cot_value_and_grad_FN, cot_jvp_FN, cot_vjp_FN, cot_jacobian_FN,\n"
      "// cot_hessian_FN); argument pointers are inK_NAME for leaf K (a tuple's components\n"
      "// NAME.0, NAME.1, ...), results outK. No name can be a C or C++ keyword, a library\n"
      "// name or macro, or another function's.\n"
      "// Sizes: " +
      sizes_doc +
      ".\n"
      "// Arguments (row-major elements; bool as one byte each):\n" +
      leaves_doc + "// Results, allocated by the caller (not overlapping any argument):\n" +
      results_doc +
      "// threads: OpenMP threads for parallel loops (0: all cores).\n"
      "// Returns 0, or a nonzero code with a message \"file:line:col: error: ...\"\n"
      "// written to message (at most message_size bytes, NUL-terminated) when it is\n"
      "// not null. The function keeps no state between calls and may run on several\n"
      "// threads at once.\n"
      "#pragma once\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      "int " +
      sig.name + "(" + params +
      ");\n\n"
      "#ifdef __cplusplus\n}\n#endif\n";

  // The loop function and the message table have internal linkage and fixed names: several
  // generated sources link into one program, and no user name reaches them.
  LoopFunction entry = fn;
  entry.name = kEntryName;
  std::string src = emit_translation_unit({&entry}, Linkage::Internal);
  // The source does not include its header: the files may be named apart from the function
  // (a name too long for a file name, docs/design.md §10), and the definition below declares
  // the same C function.
  src += "\n#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n\n";
  src += std::string("static void ") + kMessageName +
         "(int site, const int64_t* v, char* buf, size_t n) {\n  (void)v;\n"
         "  switch (site) {\n";
  for (size_t k = 0; k < fn.sites.size(); ++k) {
    Message m;
    m.add((k < sig.site_locations.size() ? sig.site_locations[k] : "") + "error: ");
    add_message(fn.sites[k], m);
    if (!fn.sites[k].help.empty()) m.add("\n  help: " + fn.sites[k].help);
    src += "    case " + std::to_string(k) + ":\n      " + m.snprintf_call() + "\n      return;\n";
  }
  src +=
      "    default:\n      std::snprintf(buf, n, \"error: unknown failure %d\", site);\n  }\n}\n\n";
  src += "extern \"C\" int " + sig.name + "(" + params + ") {\n";
  src += "  const void* inputs[] = {sizes";
  for (const auto& name : inputs) src += ", " + name;
  src += "};\n  void* outputs[] = {";
  for (size_t k = 0; k < outputs.size(); ++k) src += (k > 0 ? ", " : "") + outputs[k];
  if (outputs.empty()) src += "nullptr";
  src += "};\n  cot_ctx ctx{};\n  ctx.threads = threads;\n  ctx.max_while_iterations = 0;\n";
  src += std::string("  const int code = ") + kEntryName + "(inputs, outputs, &ctx);\n";
  src += std::string("  if (code != 0 && message != nullptr && message_size > 0) ") + kMessageName +
         "(ctx.site, ctx.values, message, message_size);\n  return code;\n}\n";
  out.source = std::move(src);
  return out;
}

}  // namespace cot::codegen
