// NumPy .npy files (numpy.lib.format): the magic "\x93NUMPY", a version byte pair, the header
// length (u16 little-endian for 1.0, u32 for 2.0 and 3.0), a header that is a Python dict literal
// such as {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } padded with spaces to a
// multiple of 64 bytes and ended by '\n', then the elements in C order.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cotangent/io.h"
#include "io/atomic_file.h"
#include "io/located_error.h"

namespace cotangent {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// The interpreter allocates at most 2^31 elements, so a larger dimension can only be an error;
// rejecting it here also keeps an empty array of shape (2^48, 0) from looping for hours.
constexpr int64_t kMaxDim = int64_t{1} << 31;

// The element types we read, with NumPy's names for messages and help.
struct NpyType {
  DType dtype;  // the tensor type it maps to
  int size;     // bytes per element
  const char* name;
  const char* descr;
  const char* numpy_attr;  // as in np.float64
};
constexpr NpyType kF64{DType::F64, 8, "float64", "<f8", "float64"};
constexpr NpyType kF32{DType::F32, 4, "float32", "<f4", "float32"};
constexpr NpyType kI64{DType::I64, 8, "int64", "<i8", "int64"};
constexpr NpyType kI32{DType::I64, 4, "int32", "<i4", "int32"};
constexpr NpyType kBool{DType::Bool, 1, "bool", "|b1", "bool_"};

const NpyType& npy_type_of(DType t) {
  switch (t) {
    case DType::F64:
      return kF64;
    case DType::F32:
      return kF32;
    case DType::I64:
      return kI64;
    case DType::Bool:
      return kBool;
  }
  return kF64;
}

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Parses the header dict. Only what NumPy writes is accepted: the three keys, with a string,
// True/False and a tuple of integers as values.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  // Returns a description of what is wrong, or nullopt.
  std::optional<std::string> parse(NpyHeader& h) {
    bool seen_descr = false, seen_order = false, seen_shape = false;
    if (!eat('{')) return "expected '{'";
    while (true) {
      if (eat('}')) break;
      std::string key;
      if (!string(key)) return "expected a quoted key or '}'";
      if (!eat(':')) return "expected ':' after '" + key + "'";
      if (key == "descr") {
        if (peek() == '[') return "structured dtypes are not supported";
        if (!string(h.descr)) return "expected a string after 'descr'";
        seen_descr = true;
      } else if (key == "fortran_order") {
        if (word("True")) {
          h.fortran_order = true;
        } else if (word("False")) {
          h.fortran_order = false;
        } else {
          return "expected True or False after 'fortran_order'";
        }
        seen_order = true;
      } else if (key == "shape") {
        if (std::optional<std::string> e = shape(h.shape)) return e;
        seen_shape = true;
      } else {
        return "unexpected key '" + key + "'";
      }
      if (!eat(',')) {
        if (!eat('}')) return "expected ',' or '}'";
        break;
      }
    }
    skip_blanks();
    if (i_ != s_.size()) return "unexpected text after the dict";
    if (!seen_descr) return "the key 'descr' is missing";
    if (!seen_order) return "the key 'fortran_order' is missing";
    if (!seen_shape) return "the key 'shape' is missing";
    return std::nullopt;
  }

 private:
  void skip_blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r' ||
                              s_[i_] == '\0')) {
      ++i_;
    }
  }
  char peek() {
    skip_blanks();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  bool word(std::string_view w) {
    skip_blanks();
    if (s_.substr(i_).starts_with(w)) {
      i_ += w.size();
      return true;
    }
    return false;
  }
  bool string(std::string& out) {
    char q = peek();
    if (q != '\'' && q != '"') return false;
    size_t end = s_.find(q, i_ + 1);
    if (end == std::string_view::npos) return false;
    out = std::string(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return true;
  }
  std::optional<std::string> shape(std::vector<int64_t>& out) {
    if (!eat('(')) return "expected a tuple after 'shape'";
    out.clear();
    while (!eat(')')) {
      skip_blanks();
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') return "expected a dimension in 'shape'";
      int64_t d = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        d = d * 10 + (s_[i_++] - '0');
        if (d > kMaxDim) return "a dimension in 'shape' is too large";
      }
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs, from old NumPy versions
      out.push_back(d);
      if (!eat(',')) {
        if (!eat(')')) return "expected ',' or ')' in 'shape'";
        break;
      }
    }
    return std::nullopt;
  }

  std::string_view s_;
  size_t i_ = 0;
};

// The header as printable text for messages (it may be arbitrary bytes).
std::string printable(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.remove_suffix(1);
  std::string out;
  for (char c : s.substr(0, 120)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return s.size() > 120 ? out + "..." : out;
}

// Maps a descr such as '<f8' to a type, or explains why it is not supported.
std::optional<NpyType> parse_descr(std::string_view descr, std::string& why, std::string& help) {
  if (descr.size() >= 2 && descr[0] == '>' && descr.substr(1) != "b1" && descr.substr(1) != "u1" &&
      descr.substr(1) != "i1") {
    why = "big-endian .npy files are not supported (dtype '" + std::string(descr) + "')";
    help = "save a little-endian copy, e.g. np.save(path, a.astype(a.dtype.newbyteorder('<')))";
    return std::nullopt;
  }
  // '=' is native order, which NumPy never writes for multi-byte types; treat it as '<'.
  std::string d(descr);
  if (!d.empty() && (d[0] == '=' || d[0] == '|' || d[0] == '>')) d[0] = '<';
  if (d == "<f8") return kF64;
  if (d == "<f4") return kF32;
  if (d == "<i8") return kI64;
  if (d == "<i4") return kI32;
  if (d == "<b1" || d == "?") return kBool;
  why = "unsupported .npy dtype '" + std::string(descr) +
        "'; supported: float64 ('<f8'), float32 ('<f4'), int64 ('<i8'), int32 ('<i4'), bool "
        "('|b1')";
  help = "convert the array with .astype() before saving it";
  return std::nullopt;
}

// Reads a little-endian element whatever the host's byte order.
template <class T, class Bits>
T load_le(const unsigned char* p) {
  Bits u = 0;
  for (size_t i = 0; i < sizeof(Bits); ++i) u |= static_cast<Bits>(p[i]) << (8 * i);
  return std::bit_cast<T>(u);
}

template <class Bits>
void store_le(Bits u, char* p) {
  for (size_t i = 0; i < sizeof(Bits); ++i) p[i] = static_cast<char>((u >> (8 * i)) & 0xff);
}

// Converts the file's elements (type `from`) into a fresh tensor of type `to`.
Value decode(const std::vector<unsigned char>& data, const NpyType& from, DType to,
             const std::vector<int64_t>& shape) {
  const unsigned char* p = data.data();
  auto real = [&](size_t k) -> double {
    return from.size == 8 ? load_le<double, uint64_t>(p + 8 * k)
                          : static_cast<double>(load_le<float, uint32_t>(p + 4 * k));
  };
  auto integer = [&](size_t k) -> int64_t {
    return from.size == 8 ? load_le<int64_t, uint64_t>(p + 8 * k)
                          : static_cast<int64_t>(load_le<int32_t, uint32_t>(p + 4 * k));
  };
  if (shape.empty()) {
    switch (to) {
      case DType::F64:
        return Value::f64(real(0));
      case DType::F32:
        return Value::f32(load_le<float, uint32_t>(p));
      case DType::I64:
        return Value::i64(integer(0));
      case DType::Bool:
        return Value::boolean(p[0] != 0);
    }
  }
  Value v = Value::zeros(to, shape);
  switch (to) {
    case DType::F64: {
      std::span<double> out = v.f64_mut();
      for (size_t k = 0; k < out.size(); ++k) out[k] = real(k);
      break;
    }
    case DType::F32: {
      std::span<float> out = v.f32_mut();
      for (size_t k = 0; k < out.size(); ++k) out[k] = load_le<float, uint32_t>(p + 4 * k);
      break;
    }
    case DType::I64: {
      std::span<int64_t> out = v.i64_mut();
      for (size_t k = 0; k < out.size(); ++k) out[k] = integer(k);
      break;
    }
    case DType::Bool: {
      std::span<uint8_t> out = v.bool_mut();
      for (size_t k = 0; k < out.size(); ++k) out[k] = p[k] != 0 ? 1 : 0;
      break;
    }
  }
  return v;
}

// True when the file's elements convert exactly to the wanted type.
bool converts(const NpyType& from, DType to) {
  if (from.dtype == to) return true;
  return from.dtype == DType::F32 && to == DType::F64;
}

std::string wanted(const ValueKind& kind) {
  if (!kind.spelling.empty()) return kind.spelling;
  std::string s = dtype_name(kind.dtype);
  if (kind.rank > 0) {
    s += "[";
    for (int i = 0; i < kind.rank; ++i) s += i > 0 ? ", _" : "_";
    s += "]";
  }
  return s;
}

}  // namespace

Result<Value> read_npy(const std::string& path, const ValueKind& kind) {
  if (kind.is_tuple) {
    return io::file_error(
        path, "a .npy file holds one tensor, but a tuple (" + wanted(kind) + ") is expected",
        "pass tuples in the JSON input");
  }
  std::error_code ec;
  uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) return io::file_error(path, "cannot read the file: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) return io::file_error(path, "cannot open the file");

  auto read = [&](size_t n, std::vector<unsigned char>& out) {
    out.resize(n);
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n));
    return static_cast<size_t>(in.gcount()) == n;
  };
  std::vector<unsigned char> prefix;
  if (file_size < 10 || !read(10, prefix) ||
      std::memcmp(prefix.data(), kMagic.data(), kMagic.size()) != 0) {
    return io::file_error(path, "not a NumPy .npy file (it does not start with \"\\x93NUMPY\")",
                          "save arrays with np.save");
  }
  int major = prefix[6], minor = prefix[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return io::file_error(path, "unsupported .npy format version " + std::to_string(major) + "." +
                                    std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  uintmax_t header_len = prefix[8] | (uintmax_t{prefix[9]} << 8);
  uintmax_t header_start = 10;
  if (major >= 2) {
    std::vector<unsigned char> more;
    if (file_size < 12 || !read(2, more)) {
      return io::file_error(path, "the .npy file is truncated inside its header");
    }
    header_len |= (uintmax_t{more[0]} << 16) | (uintmax_t{more[1]} << 24);
    header_start = 12;
  }
  if (header_len > file_size - header_start) {
    return io::file_error(path, "the .npy file is truncated: its header is " +
                                    std::to_string(header_len) + " bytes but the file has " +
                                    std::to_string(file_size) + " bytes");
  }
  std::vector<unsigned char> header_bytes;
  if (!read(static_cast<size_t>(header_len), header_bytes)) {
    return io::file_error(path, "cannot read the .npy header");
  }
  std::string_view header_text(reinterpret_cast<const char*>(header_bytes.data()),
                               header_bytes.size());
  NpyHeader header;
  if (std::optional<std::string> why = HeaderParser(header_text).parse(header)) {
    return io::file_error(
        path, "malformed .npy header: " + *why + " in \"" + printable(header_text) + "\"");
  }

  std::string why, help;
  std::optional<NpyType> type = parse_descr(header.descr, why, help);
  if (!type) return io::file_error(path, why, help);
  // Fortran order only changes the layout when more than one dimension exceeds 1.
  int64_t long_dims = 0;
  for (int64_t d : header.shape) long_dims += d > 1;
  if (header.fortran_order && long_dims > 1) {
    return io::file_error(path,
                          "Fortran-order .npy files are not supported; save with "
                          "np.ascontiguousarray",
                          "np.save(path, np.ascontiguousarray(a))");
  }
  std::string found = std::string(type->name[0] == 'i' ? "an " : "a ") + type->name +
                      " array of shape " + shape_string(header.shape);
  if (static_cast<int64_t>(header.shape.size()) != kind.rank) {
    return io::file_error(path,
                          "expected " + wanted(kind) + " (a tensor of rank " +
                              std::to_string(kind.rank) + ") but the file holds " + found,
                          "save an array with " + std::to_string(kind.rank) +
                              (kind.rank == 1 ? " dimension" : " dimensions"));
  }
  if (!converts(*type, kind.dtype)) {
    return io::file_error(path, "expected " + wanted(kind) + " but the file holds " + found,
                          std::string("convert it before saving, e.g. a.astype(np.") +
                              npy_type_of(kind.dtype).numpy_attr + ")");
  }

  // The shape must account for the file's size exactly; checked before allocating anything.
  // UINT64_MAX stands for "overflows", which no file can match.
  auto times = [](uint64_t a, uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
  };
  uint64_t numel = 1;
  for (int64_t d : header.shape) numel = times(numel, static_cast<uint64_t>(d));
  uint64_t need = times(numel, static_cast<uint64_t>(type->size));
  uintmax_t available = file_size - (header_start + header_len);
  if (need != available) {
    std::string what =
        need > available ? "the .npy file is truncated: " : "the .npy file is too long: ";
    return io::file_error(
        path, what + found + " needs " +
                  (need == UINT64_MAX ? std::string("too many") : std::to_string(need)) +
                  " bytes of data but " + std::to_string(available) + " bytes follow the header");
  }
  // An empty array can still have absurd dimensions, e.g. (2^31, 0), whose rows would take
  // hours to print or iterate: bound the product of the nonzero dimensions as well.
  uint64_t outer = 1;
  for (int64_t d : header.shape) outer = d == 0 ? outer : times(outer, static_cast<uint64_t>(d));
  if (outer > static_cast<uint64_t>(kMaxDim)) {
    return io::file_error(path, "the .npy array " + found +
                                    " is too large: its nonzero "
                                    "dimensions multiply to more than 2^31");
  }
  std::vector<unsigned char> data;
  if (!read(static_cast<size_t>(need), data)) {
    return io::file_error(path, "cannot read the data of the .npy file");
  }
  return decode(data, *type, kind.dtype, header.shape);
}

Result<bool> write_npy(const std::string& path, const Value& v) {
  if (v.is_tuple()) {
    return io::file_error(path, "cannot write a tuple (" + v.type_string() + ") to a .npy file",
                          "a .npy file holds one tensor; write the result as JSON instead");
  }
  if (!v.well_formed()) {
    return io::file_error(path, "cannot write a tensor whose shape " + v.type_string() +
                                    " has a negative dimension, too many elements, or no storage");
  }
  const NpyType& type = npy_type_of(v.dtype());
  std::string dict = std::string("{'descr': '") + type.descr +
                     "', 'fortran_order': False, 'shape': " + shape_string(v.shape()) + ", }";
  // Pad with spaces so that the data starts at a multiple of 64 bytes; '\n' ends the header.
  size_t prefix_len = 10;
  size_t header_len = dict.size() + 1;
  if ((prefix_len + header_len + 63) / 64 * 64 - prefix_len > 65535) prefix_len = 12;  // 2.0
  size_t total = (prefix_len + header_len + 63) / 64 * 64;
  header_len = total - prefix_len;
  std::string head(kMagic);
  head += static_cast<char>(prefix_len == 10 ? 1 : 2);
  head += '\0';
  for (size_t i = 0; i < prefix_len - 8; ++i)
    head += static_cast<char>((header_len >> (8 * i)) & 0xff);
  head += dict;
  head.append(total - head.size() - 1, ' ');
  head += '\n';

  io::AtomicFile out(path);
  out.write(head);
  // Encoded in chunks so that a large tensor is not copied whole.
  constexpr size_t kChunk = 1 << 16;
  std::vector<char> buf;
  size_t n = static_cast<size_t>(v.numel());
  for (size_t begin = 0; begin < n && out.ok(); begin += kChunk) {
    size_t end = std::min(n, begin + kChunk);
    buf.resize((end - begin) * static_cast<size_t>(type.size));
    char* p = buf.data();
    for (size_t k = begin; k < end; ++k, p += type.size) {
      switch (v.dtype()) {
        case DType::F64:
          store_le(std::bit_cast<uint64_t>(v.f64_data()[k]), p);
          break;
        case DType::F32:
          store_le(std::bit_cast<uint32_t>(v.f32_data()[k]), p);
          break;
        case DType::I64:
          store_le(std::bit_cast<uint64_t>(v.i64_data()[k]), p);
          break;
        case DType::Bool:
          *p = v.bool_data()[k] ? 1 : 0;
          break;
      }
    }
    out.write(std::string_view(buf.data(), buf.size()));
  }
  return out.commit();
}

}  // namespace cotangent
