#include "gradbench/serve.h"

#include <exception>
#include <istream>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "io/json_parse.h"

namespace cot::gradbench {
namespace {

using nlohmann::json;

// OutOfMemory: storing the line failed (std::bad_alloc); the rest of it is skipped.
enum class LineRead { Line, TooLong, OutOfMemory, End };

// Reads the next line of `in` into `line` (the newline consumed, not stored). A line longer
// than `max_bytes` is read to its end but not kept: LineRead::TooLong.
LineRead read_line(std::istream& in, std::string& line, size_t max_bytes) {
  line.clear();
  bool any = false;
  bool too_long = false;
  char chunk[1 << 16];
  for (;;) {
    in.get(chunk, sizeof chunk, '\n');
    const auto n = static_cast<size_t>(in.gcount());
    any = any || n > 0;
    if (!too_long && line.size() + n > max_bytes) {
      too_long = true;
      std::string().swap(line);
    }
    if (!too_long) line.append(chunk, n);
    if (in.bad()) return LineRead::End;
    if (in.eof()) break;
    in.clear();  // get() fails when the line is empty: it stored nothing
    if (in.peek() == '\n') {
      in.ignore();
      any = true;
      break;
    }
  }
  if (!any) return LineRead::End;
  return too_long ? LineRead::TooLong : LineRead::Line;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

json failure(const json& id, const std::string& error) {
  return {{"id", id}, {"success", false}, {"error", error}};
}

// `e`, an error about the message text alone (whose line is 1, or none), placed on the
// message's line of the stream.
std::string on_line(cotangent::Error e, const std::string& source, int line) {
  const std::string from = e.line > 0 ? source + ":" + std::to_string(e.line) + ":" : source + ":";
  const std::string to = source + ":" + std::to_string(line) + ":";
  if (e.rendered.starts_with(from)) e.rendered.replace(0, from.size(), to);
  e.line = line;
  return cotangent::to_string({e});
}

std::string type_of(const json& j) {
  if (j.is_array()) return "an array";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  return "a number";
}

// The response to one message line. `id` is set once the message has one, for the answer to
// an exception thrown after that.
json answer(Tool& tool, const std::string& text, const std::string& source, int line, json& id) {
  json message;
  // The CLI's reader: nesting is capped (kMaxJsonDepth) before anything recurses.
  if (auto e = cotangent::io::parse_json(text, source, message)) {
    return failure(nullptr, on_line(*e, source, line));
  }
  if (!message.is_object()) {
    return failure(nullptr, source + ":" + std::to_string(line) +
                                ": error: a message must be a JSON object, found " +
                                type_of(message) + "\n");
  }
  if (message.contains("id")) id = message.at("id");
  return tool.respond(message, source, line);
}

}  // namespace

int serve(Tool& tool, std::istream& in, std::ostream& out, std::ostream& diagnostics,
          const ServeOptions& options) {
  std::string line;
  int line_number = 0;
  for (;;) {
    LineRead read = LineRead::End;
    try {
      read = read_line(in, line, options.max_message_bytes);
    } catch (const std::bad_alloc&) {  // a long line on a machine short of memory
      in.clear();
      in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
      std::string().swap(line);
      read = LineRead::OutOfMemory;
    }
    if (read == LineRead::End) return 0;
    ++line_number;
    if (read == LineRead::Line && is_blank(line)) continue;
    const std::string where = options.source + ":" + std::to_string(line_number) + ": error: ";
    json id;
    std::string text;
    try {
      json response;
      if (read == LineRead::TooLong) {
        response = failure(nullptr, where + "the message is longer than " +
                                        std::to_string(options.max_message_bytes) +
                                        " bytes, the tool's limit\n");
      } else if (read == LineRead::OutOfMemory) {
        response = failure(nullptr, where + "out of memory while reading the message\n");
      } else {
        response = answer(tool, line, options.source, line_number, id);
      }
      // Errors quote the input, which need not be UTF-8: such bytes are replaced, not thrown.
      text = response.dump(-1, ' ', false, json::error_handler_t::replace);
    } catch (const std::bad_alloc&) {
      text = failure(id, where + "out of memory while handling the message\n")
                 .dump(-1, ' ', false, json::error_handler_t::replace);
    } catch (const std::exception& e) {
      text = failure(id, where + "internal error while handling the message: " + e.what() + "\n")
                 .dump(-1, ' ', false, json::error_handler_t::replace);
    }
    out << text << '\n';
    out.flush();
    if (!out) {
      diagnostics << "cotangent gradbench: error: cannot write the response to the message on "
                  << options.source << " line " << line_number << "\n";
      return 1;
    }
  }
}

}  // namespace cot::gradbench
