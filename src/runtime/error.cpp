#include "cotangent/error.h"

namespace cotangent {
namespace {

// The same layout as a rendered diagnostic, minus the source line that only the renderer has:
//   file:line:col: error: message
//     help: ...
std::string format(const Error& e) {
  std::string s;
  if (!e.file.empty()) {
    s += e.file;
    if (e.line > 0) {
      s += ":" + std::to_string(e.line);
      if (e.column > 0) s += ":" + std::to_string(e.column);
    }
    s += ": ";
  }
  s += "error: " + e.message + "\n";
  if (!e.help.empty()) s += "  help: " + e.help + "\n";
  return s;
}

}  // namespace

std::string to_string(const std::vector<Error>& errors) {
  std::string out;
  size_t shown = 0;
  for (const Error& e : errors) {
    if (shown == kErrorsShown && errors.size() > kErrorsShown + 1) {
      // As clang's -ferror-limit: a file with thousands of errors (a generated one, or the
      // wrong file) gives a screenful, and the count says how many more there are. One error
      // more is shown rather than counted (the JSON reader's own count comes 21st).
      const size_t rest = errors.size() - shown;
      out += std::to_string(rest) + " more error" + (rest == 1 ? "" : "s") + " not shown (" +
             std::to_string(errors.size()) + " in all)\n";
      break;
    }
    ++shown;
    if (e.rendered.empty()) {
      out += format(e);
    } else {
      out += e.rendered;
      // Keep one error per line run even if a renderer forgot the final newline.
      if (out.back() != '\n') out += '\n';
    }
  }
  return out;
}

}  // namespace cotangent
