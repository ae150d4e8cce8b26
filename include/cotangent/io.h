// Values in and out of files: JSON (numbers, booleans, nested arrays for tensors, arrays for
// tuples; reals may also be the strings "inf", "-inf", "nan") and NumPy .npy files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cotangent/error.h"
#include "cotangent/value.h"

namespace cotangent {

// The structure a value must have: a tensor of a dtype and rank, or a tuple. Shapes are not
// part of it: they are checked against the function's size variables when it is called.
struct ValueKind {
  bool is_tuple = false;
  DType dtype = DType::F64;
  int rank = 0;
  std::vector<ValueKind> elems;
  std::string spelling;  // the declared type as written, e.g. "f64[n, m]", for messages

  // How many tensors a value of this kind holds (a tensor: 1; a tuple: its elements' leaves).
  size_t leaf_count() const {
    if (!is_tuple) return 1;
    size_t n = 0;
    for (const ValueKind& e : elems) n += e.leaf_count();
    return n;
  }
};

// Reads the arguments of a function from a JSON object with one entry per parameter.
// `names` and `kinds` describe the parameters in order. Missing, extra or malformed entries are
// errors naming the parameter and the position inside it (for example `x[1][2]`).
Result<std::vector<Value>> arguments_from_json(std::string_view text, const std::string& file,
                                               const std::vector<std::string>& names,
                                               const std::vector<ValueKind>& kinds);

// The text of a JSON input file, or of standard input for "-" (named "<stdin>" in messages).
// At most 1 GiB is read (larger tensors belong in .npy files), and a NUL byte, which JSON text
// never holds, ends the read with an error: a wrong path such as /dev/zero fails at once.
Result<std::string> read_json_input(const std::string& path);

// One value from parsed JSON text (used for single values and tests).
Result<Value> value_from_json(std::string_view text, const std::string& file,
                              const ValueKind& kind);

// JSON text of a value: tensors as nested arrays, tuples as arrays, reals with 17 significant
// digits, non-finite reals as "inf", "-inf", "nan".
// "null" for a value that is not well formed or one value_to_json_checked refuses.
std::string value_to_json(const Value& v);

// The most empty arrays the JSON text of an empty tensor may hold: an empty tensor of shape
// [10^12, 0] is written as 10^12 empty arrays (4 TB of "[], "), which no reader wants.
inline constexpr int64_t kMaxJsonEmptyArrays = int64_t{1} << 28;

// value_to_json, or an error for a value whose text would be out of proportion to it (an empty
// tensor holding more than kMaxJsonEmptyArrays arrays) or that is not well formed.
Result<std::string> value_to_json_checked(const Value& v);

// NumPy .npy (format 1.0-3.0; f64, f32, i64, bool; C order; little-endian). Reading converts
// to the wanted dtype when it is exact to do so (f32 -> f64, i64 of an f64 param is an error).
Result<Value> read_npy(const std::string& path, const ValueKind& kind);
// Writes a tensor (not a tuple) as .npy, whole or not at all (as write_files); returns an error
// when the file cannot be written.
Result<bool> write_npy(const std::string& path, const Value& v);

// Writes files whole or not at all: each to a temporary file beside it, every write and the
// closing checked, and only when all are written are they renamed over the files (a path that
// is not a regular file, such as /dev/stdout, is written in place). On failure the previous
// files are left as they were, the temporaries are removed, and the error names the file and
// the system's reason.
struct FileText {
  std::string path;
  std::string_view text;
};
Result<bool> write_files(const std::vector<FileText>& files);

}  // namespace cotangent
