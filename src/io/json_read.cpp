// Reading values from JSON: parse with nlohmann::json, then convert to Values of the declared
// kinds with messages that name the parameter, the path inside it and where it is in the text.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cotangent/io.h"
#include "io/json_parse.h"
#include "io/json_position.h"
#include "io/located_error.h"
#include "io/read_text.h"

namespace cotangent {
namespace {

using io::kNoOffset;
using nlohmann::json;

// Enough to show every problem in a hand-written input without flooding a terminal.
constexpr size_t kMaxErrors = 20;

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// How a JSON value is described after "found".
std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return j.dump();
    case json::value_t::string: {
      std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
      if (s.size() > 40) s = s.substr(0, 36) + "...\"";
      return "the string " + s;
    }
    case json::value_t::array:
      return j.empty() ? "an empty array" : "an array of " + plural(j.size(), "element");
    case json::value_t::object:
      return "an object";
    default:
      return "a value of an unsupported type";
  }
}

std::string scalar_noun(DType t) {
  switch (t) {
    case DType::F64:
    case DType::F32:
      return std::string("a real number (") + dtype_name(t) + ")";
    case DType::I64:
      return "an integer (i64)";
    case DType::Bool:
      return "a boolean (bool)";
  }
  return "a scalar";
}

// Example values for help texts: 0.5, 1.5, ... for reals, 1, 2, ... for integers.
std::string example_scalar(DType t, int& counter) {
  int k = counter++;
  switch (t) {
    case DType::F64:
    case DType::F32:
      return std::to_string(k) + ".5";
    case DType::I64:
      return std::to_string(k + 1);
    case DType::Bool:
      return k % 2 == 0 ? "true" : "false";
  }
  return "0";
}

std::string example_tensor(DType t, int rank, int& counter) {
  if (rank == 0) return example_scalar(t, counter);
  std::string a = example_tensor(t, rank - 1, counter);
  std::string b = example_tensor(t, rank - 1, counter);
  return "[" + a + ", " + b + "]";
}

std::string example_tensor(DType t, int rank) {
  int counter = 0;
  return example_tensor(t, std::min(rank, 3), counter);
}

std::string example_value(const ValueKind& kind) {
  if (!kind.is_tuple) return example_tensor(kind.dtype, kind.rank);
  std::string out = "[";
  for (size_t i = 0; i < kind.elems.size(); ++i) {
    if (i > 0) out += ", ";
    out += example_value(kind.elems[i]);
  }
  return out + "]";
}

// The declared type for messages; synthesized when the caller did not give its spelling.
std::string spelling(const ValueKind& kind) {
  if (!kind.spelling.empty()) return kind.spelling;
  if (kind.is_tuple) {
    std::string out = "(";
    for (size_t i = 0; i < kind.elems.size(); ++i) {
      out += (i > 0 ? ", " : "") + spelling(kind.elems[i]);
    }
    return out + ")";
  }
  std::string out = dtype_name(kind.dtype);
  if (kind.rank > 0) {
    out += "[";
    for (int i = 0; i < kind.rank; ++i) out += i > 0 ? ", _" : "_";
    out += "]";
  }
  return out;
}

// Converts one parsed JSON value to a Value of a declared kind, or records the first problem.
class Converter {
 public:
  Converter(std::string_view text, const std::string& file, size_t offset, std::string name)
      : text_(text), file_(file), offset_(offset), name_(std::move(name)) {}

  std::optional<Value> convert(const json& j, const ValueKind& kind) {
    return kind.is_tuple ? tuple(j, kind) : tensor(j, kind);
  }
  Error take_error() { return std::move(*error_); }

 private:
  // Where elements are stored: the span of the tensor's dtype, or none while checking.
  struct Sink {
    std::span<double> f64;
    std::span<float> f32;
    std::span<int64_t> i64;
    std::span<uint8_t> b;
  };

  std::optional<Value> tuple(const json& j, const ValueKind& kind) {
    if (!j.is_array() || j.size() != kind.elems.size()) {
      fail(path() + " must be a tuple of " + plural(kind.elems.size(), "element") + " (" +
               spelling(kind) + "), found " + describe(j),
           "a tuple is written as an array, e.g. " + example_value(kind));
      return std::nullopt;
    }
    std::vector<Value> elems;
    for (size_t i = 0; i < j.size(); ++i) {
      idx_.push_back(static_cast<int64_t>(i));
      std::optional<Value> e = convert(j[i], kind.elems[i]);
      idx_.pop_back();
      if (!e) return std::nullopt;
      elems.push_back(std::move(*e));
    }
    return Value::tuple(std::move(elems));
  }

  std::optional<Value> tensor(const json& j, const ValueKind& kind) {
    if (kind.rank == 0) return scalar(j, kind.dtype);
    std::optional<std::vector<int64_t>> shape = infer_shape(j, kind);
    if (!shape) return std::nullopt;
    base_ = idx_.size();
    // Everything is checked before allocating: the first element at each level fixes the
    // shape, so a small malformed input could otherwise ask for a huge tensor.
    int64_t flat = 0;
    if (!fill(j, 0, kind, *shape, Sink{}, flat)) return std::nullopt;
    Value v = Value::zeros(kind.dtype, *shape);
    Sink sink;
    switch (kind.dtype) {
      case DType::F64:
        sink.f64 = v.f64_mut();
        break;
      case DType::F32:
        sink.f32 = v.f32_mut();
        break;
      case DType::I64:
        sink.i64 = v.i64_mut();
        break;
      case DType::Bool:
        sink.b = v.bool_mut();
        break;
    }
    flat = 0;
    if (!fill(j, 0, kind, *shape, sink, flat)) return std::nullopt;
    return v;
  }

  // The shape is that of the first element at each level; fill() checks the others against it.
  // An empty array makes this and every inner dimension zero.
  std::optional<std::vector<int64_t>> infer_shape(const json& j, const ValueKind& kind) {
    std::vector<int64_t> shape(static_cast<size_t>(kind.rank), 0);
    const json* cur = &j;
    for (int k = 0; k < kind.rank; ++k) {
      if (!cur->is_array()) {
        std::string found =
            k == 0 ? describe(*cur) : "a nested array of depth " + std::to_string(k);
        fail(path() + " must be a tensor of rank " + std::to_string(kind.rank) + " (" +
                 spelling(kind) + "), found " + found,
             rank_help(kind));
        return std::nullopt;
      }
      shape[static_cast<size_t>(k)] = static_cast<int64_t>(cur->size());
      if (cur->empty()) return shape;
      cur = &(*cur)[0];
    }
    if (cur->is_array()) {
      int depth = kind.rank;
      for (; cur->is_array(); ++depth) {
        if (cur->empty()) {
          ++depth;
          break;
        }
        cur = &(*cur)[0];
      }
      fail(path() + " must be a tensor of rank " + std::to_string(kind.rank) + " (" +
               spelling(kind) + "), found a nested array of depth " + std::to_string(depth),
           rank_help(kind));
      return std::nullopt;
    }
    return shape;
  }

  bool fill(const json& a, int k, const ValueKind& kind, const std::vector<int64_t>& shape,
            const Sink& sink, int64_t& flat) {
    if (k == kind.rank) return element(a, kind.dtype, sink, flat++);
    size_t want = static_cast<size_t>(shape[static_cast<size_t>(k)]);
    if (!a.is_array()) {
      fail(path() + " must be an array of " + plural(want, "element") + " like " +
               reference_path(k) + ", found " + describe(a),
           rank_help(kind));
      return false;
    }
    if (a.size() != want) {
      fail(path() + " has " + plural(a.size(), "element") + " but " + reference_path(k) + " has " +
               std::to_string(want),
           "every row of a tensor must have the same length");
      return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      idx_.push_back(static_cast<int64_t>(i));
      bool ok = fill(a[i], k + 1, kind, shape, sink, flat);
      idx_.pop_back();
      if (!ok) return false;
    }
    return true;
  }

  std::optional<Value> scalar(const json& j, DType t) {
    switch (t) {
      case DType::F64: {
        double x = 0;
        if (!real(j, t, x)) return std::nullopt;
        return Value::f64(x);
      }
      case DType::F32: {
        double x = 0;
        if (!real(j, t, x)) return std::nullopt;
        return Value::f32(static_cast<float>(x));
      }
      case DType::I64: {
        int64_t x = 0;
        if (!integer(j, x)) return std::nullopt;
        return Value::i64(x);
      }
      case DType::Bool: {
        if (!boolean(j)) return std::nullopt;
        return Value::boolean(j.get<bool>());
      }
    }
    return std::nullopt;
  }

  // Checks element `k` and stores it unless `sink` is empty (the checking pass).
  bool element(const json& j, DType t, const Sink& sink, int64_t k) {
    size_t i = static_cast<size_t>(k);
    switch (t) {
      case DType::F64:
      case DType::F32: {
        double x = 0;
        if (!real(j, t, x)) return false;
        if (!sink.f64.empty()) sink.f64[i] = x;
        if (!sink.f32.empty()) sink.f32[i] = static_cast<float>(x);
        return true;
      }
      case DType::I64: {
        int64_t x = 0;
        if (!integer(j, x)) return false;
        if (!sink.i64.empty()) sink.i64[i] = x;
        return true;
      }
      case DType::Bool:
        if (!boolean(j)) return false;
        if (!sink.b.empty()) sink.b[i] = j.get<bool>() ? 1 : 0;
        return true;
    }
    return false;
  }

  bool real(const json& j, DType t, double& out) {
    if (j.is_number_integer() || j.is_number_float()) {  // is_number_integer includes unsigned
      out = j.get<double>();
    } else if (j.is_string() && (j == "inf" || j == "-inf" || j == "nan")) {
      const std::string& s = j.get_ref<const std::string&>();
      constexpr double kInf = std::numeric_limits<double>::infinity();
      out = s == "nan" ? std::numeric_limits<double>::quiet_NaN() : s == "inf" ? kInf : -kInf;
      return true;
    } else {
      std::string help =
          j.is_string() ? "the only strings accepted for reals are \"inf\", \"-inf\" and \"nan\""
                        : "write a number";
      fail(path() + " must be " + scalar_noun(t) + ", found " + describe(j), help);
      return false;
    }
    // Doubles from 2^128 - 2^103 up round to infinity as f32.
    if (t == DType::F32 && std::fabs(out) >= std::ldexp(1.0, 128) - std::ldexp(1.0, 103)) {
      fail(path() + " = " + j.dump() + " is too large for f32",
           "the largest f32 is about 3.4028235e+38; declare the parameter f64 for larger values");
      return false;
    }
    return true;
  }

  bool integer(const json& j, int64_t& out) {
    constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
    if (j.is_number_unsigned()) {
      if (j.get<uint64_t>() > kMax) return out_of_range(j);
      out = static_cast<int64_t>(j.get<uint64_t>());
      return true;
    }
    if (j.is_number_integer()) {
      out = j.get<int64_t>();
      return true;
    }
    // Integers beyond 64 bits reach here as floats.
    if (j.is_number_float()) {
      double x = j.get<double>();
      if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) >= 9.2233720368547758e18) {
        return out_of_range(j);
      }
      fail(path() + " must be an integer (i64), found " + describe(j),
           "i64 values are written without a decimal point or exponent, e.g. 2");
      return false;
    }
    fail(path() + " must be an integer (i64), found " + describe(j), "write a whole number");
    return false;
  }

  bool out_of_range(const json& j) {
    fail(path() + " = " + j.dump() + " does not fit in i64",
         "i64 values range from -9223372036854775808 to 9223372036854775807");
    return false;
  }

  bool boolean(const json& j) {
    if (j.is_boolean()) return true;
    fail(path() + " must be a boolean (bool), found " + describe(j), "write true or false");
    return false;
  }

  std::string rank_help(const ValueKind& kind) const {
    return "a tensor of rank " + std::to_string(kind.rank) + " is written as " +
           std::to_string(kind.rank) + (kind.rank == 1 ? " array" : " nested arrays") + ", e.g. " +
           example_tensor(kind.dtype, kind.rank);
  }

  std::string path() const {
    std::string p = name_;
    for (int64_t i : idx_) p += "[" + std::to_string(i) + "]";
    return p;
  }
  // The element at the same depth that fixed the shape: the tensor's path, then [0] k times.
  std::string reference_path(int k) const {
    std::string p = name_;
    for (size_t i = 0; i < base_; ++i) p += "[" + std::to_string(idx_[i]) + "]";
    for (int i = 0; i < k; ++i) p += "[0]";
    return p;
  }

  void fail(std::string message, std::string help) {
    size_t at = offset_ == kNoOffset ? kNoOffset : io::json_element_offset(text_, offset_, idx_);
    error_ = io::error_at(text_, file_, at, std::move(message), std::move(help));
  }

  std::string_view text_;
  const std::string& file_;
  size_t offset_;  // where the converted value starts in text_
  std::string name_;
  std::vector<int64_t> idx_;  // path from the converted value to the current element
  size_t base_ = 0;           // idx_.size() where the current tensor starts
  std::optional<Error> error_;
};

// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`, or `limit` + 1
// when there are more than `limit`. Two rows of the table, and rows stop once every entry is
// past the limit, so a long name costs little.
size_t edit_distance(std::string_view a, std::string_view b, size_t limit) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit) return limit + 1;
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], before[j - 2] + 1);
      }
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[b.size()], limit + 1);
}

// A parameter name close enough to `key` to be what was meant. Only called for the errors that
// are shown, and bounded per name: keys and names longer than 64 bytes are never close.
const std::string* close_name(const std::string& key, const std::vector<std::string>& names) {
  constexpr size_t kLongest = 64;
  if (key.size() > kLongest) return nullptr;
  for (const std::string& n : names) {
    if (n.size() > kLongest) continue;
    const size_t allowed = std::max<size_t>(1, n.size() / 3);
    size_t d = edit_distance(key, n, allowed);
    if (d < n.size() && d <= allowed) return &n;
  }
  return nullptr;
}

std::string quoted_key(const std::string& key) {
  std::string k = json(key).dump(-1, ' ', false, json::error_handler_t::replace);
  k = k.substr(1, k.size() - 2);
  if (k.size() > 40) k = k.substr(0, 37) + "...";
  return "'" + k + "'";
}

}  // namespace

Result<std::vector<Value>> arguments_from_json(std::string_view text, const std::string& file,
                                               const std::vector<std::string>& names,
                                               const std::vector<ValueKind>& kinds) {
  if (names.size() != kinds.size()) {
    return io::file_error(file, "internal error: parameter names and kinds differ in number");
  }
  json doc;
  if (std::optional<Error> e = io::parse_json(text, file, doc)) return *e;
  size_t root = io::json_root_offset(text);

  std::string param_list;
  std::string example;
  for (size_t i = 0; i < names.size(); ++i) {
    param_list += (i > 0 ? ", " : "") + names[i];
    example += (i > 0 ? ", \"" : "\"") + names[i] + "\": " + example_value(kinds[i]);
  }
  example = "{" + example + "}";
  if (!doc.is_object()) {
    return io::error_at(
        text, file, root,
        "the input must be a JSON object with one entry per parameter, found " + describe(doc),
        "for example " + example);
  }

  // Errors past kMaxErrors are counted, not built: building one finds its line (a pass over
  // the text) and a suggestion, and an input with 100,000 unknown entries must not cost
  // 100,000 of those.
  std::vector<Error> errors;
  size_t not_shown = 0;
  auto room = [&] {
    if (errors.size() < kMaxErrors) return true;
    ++not_shown;
    return false;
  };
  // Where each entry's value is; a repeated key counts as its last value, as in the DOM.
  std::unordered_map<std::string, size_t> value_offset;
  const std::unordered_set<std::string> name_set(names.begin(), names.end());
  for (io::JsonMember& m : io::json_object_members(text, root)) {
    if (value_offset.contains(m.key)) {
      if (room()) {
        errors.push_back(io::error_at(text, file, m.key_offset,
                                      "input has two entries for " + quoted_key(m.key),
                                      "remove one of them"));
      }
    } else if (!name_set.contains(m.key) && room()) {
      const std::string* close = close_name(m.key, names);
      std::string help = close ? "did you mean '" + *close + "'?" : "remove the entry";
      std::string params =
          names.empty() ? "the function has no parameters" : "parameters: " + param_list;
      errors.push_back(io::error_at(text, file, m.key_offset,
                                    "input has an entry " + quoted_key(m.key) +
                                        " that is not a parameter of the function (" + params + ")",
                                    help));
    }
    value_offset[std::move(m.key)] = m.value_offset;
  }

  std::vector<Value> values;
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = doc.find(names[i]);
    if (it == doc.end()) {
      if (!room()) continue;
      errors.push_back(io::error_at(
          text, file, root,
          "parameter '" + names[i] + "' is missing from the input; expected " + spelling(kinds[i]),
          "add an entry such as \"" + names[i] + "\": " + example_value(kinds[i])));
      continue;
    }
    auto off = value_offset.find(names[i]);
    Converter conv(text, file, off == value_offset.end() ? kNoOffset : off->second, names[i]);
    std::optional<Value> v = conv.convert(*it, kinds[i]);
    if (!v) {
      if (room()) errors.push_back(conv.take_error());
      continue;
    }
    values.push_back(std::move(*v));
  }
  if (not_shown > 0) {
    errors.push_back(io::file_error(file,
                                    plural(not_shown, "more error") + " in the input " +
                                        (not_shown == 1 ? "is" : "are") + " not shown",
                                    "fix the errors above and run again"));
  }
  if (!errors.empty()) return errors;
  return values;
}

Result<std::string> read_json_input(const std::string& path) {
  if (path == "-") return io::read_text_stream(std::cin, "<stdin>", io::json_text_rules());
  return io::read_text_file(path, path, io::json_text_rules());
}

Result<Value> value_from_json(std::string_view text, const std::string& file,
                              const ValueKind& kind) {
  json doc;
  if (std::optional<Error> e = io::parse_json(text, file, doc)) return *e;
  Converter conv(text, file, io::json_root_offset(text), "value");
  std::optional<Value> v = conv.convert(doc, kind);
  if (!v) return conv.take_error();
  return std::move(*v);
}

}  // namespace cotangent
