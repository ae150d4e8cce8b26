#include "prims/scalar.h"

namespace cot {

const char* to_string(Scalar s) {
  switch (s) {
    case Scalar::F64:
      return "f64";
    case Scalar::F32:
      return "f32";
    case Scalar::I64:
      return "i64";
    case Scalar::Bool:
      return "bool";
  }
  return "?";
}

}  // namespace cot
