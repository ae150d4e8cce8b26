#include "io/json_parse.h"

#include <cctype>
#include <string>
#include <vector>

#include "io/json_position.h"
#include "io/located_error.h"

namespace cotangent::io {
namespace {

using nlohmann::json;

// Builds the DOM through the SAX interface: unlike json::parse, every failure (including number
// overflow, which nlohmann reports as out_of_range) then arrives with its byte position.
class DomBuilder {
 public:
  json root;
  bool failed = false;
  size_t error_byte = 0;
  std::string error_what;

  bool null() { return add(json(nullptr)); }
  bool boolean(bool b) { return add(json(b)); }
  bool number_integer(json::number_integer_t v) { return add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return add(json(v)); }
  bool string(json::string_t& s) { return add(json(std::move(s))); }
  bool binary(json::binary_t&) { return false; }  // JSON text has no binary values
  bool start_object(size_t) { return open(json::object()); }
  bool key(json::string_t& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(size_t) { return open(json::array()); }
  bool end_array() { return close(); }
  bool parse_error(size_t byte, const std::string&, const json::exception& ex) {
    failed = true;
    error_byte = byte;
    error_what = ex.what();
    return false;
  }

 private:
  // Stores `v` where the parser is and returns where it went.
  json* place(json v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    json& slot = top[key_];  // a repeated key keeps the last value, as json::parse does
    slot = std::move(v);
    return &slot;
  }
  bool add(json v) {
    place(std::move(v));
    return true;
  }
  bool open(json v) {
    stack_.push_back(place(std::move(v)));
    return true;
  }
  bool close() {
    if (!stack_.empty()) stack_.pop_back();
    return true;
  }

  std::vector<json*> stack_;
  std::string key_;
};

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 5:
// syntax error while parsing value - unexpected '}'; ..."; the position goes into the Error's
// fields, so only the description is kept.
std::string clean_parse_message(std::string what) {
  if (what.starts_with("[json.exception.")) {
    size_t p = what.find("] ");
    if (p != std::string::npos) what.erase(0, p + 2);
  }
  if (what.starts_with("parse error")) {
    size_t p = what.find(": ");
    if (p != std::string::npos) what.erase(0, p + 2);
  }
  if (what.starts_with("syntax error while parsing ")) {
    size_t p = what.find(" - ");
    if (p != std::string::npos) what.erase(0, p + 3);
  }
  // "last read: '...'" repeats (sometimes more than) the text the caret points at.
  if (size_t p = what.find("; last read: "); p != std::string::npos) what.erase(p);
  return "invalid JSON: " + what;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.';
}

// The lexer reports the character where a bad literal or number stopped making sense; the
// caret is clearer at the start of that word.
size_t word_start(std::string_view text, size_t offset) {
  while (offset > 0 && offset <= text.size() && is_word_char(text[offset - 1])) --offset;
  return offset;
}

// A help for the common mistake of writing non-finite reals as bare words.
std::string parse_help(std::string_view text, size_t begin) {
  if (begin < text.size() && text[begin] == '\'') return "JSON strings use double quotes";
  size_t end = begin;
  while (end < text.size() && end - begin < 16 && is_word_char(text[end])) ++end;
  std::string word = lower(text.substr(begin, end - begin));
  for (const char* w : {"nan", "inf", "-inf", "+inf", "infinity", "-infinity", "+infinity"}) {
    if (word == w)
      return "non-finite reals are written as the strings \"inf\", \"-inf\" and \"nan\"";
  }
  return {};
}

}  // namespace

TextRules json_text_rules() {
  TextRules r;
  r.max_bytes = kMaxJsonBytes;
  r.kind = "JSON input";
  r.too_large_help = "pass large tensors as .npy files (--arg NAME=PATH.npy)";
  return r;
}

std::optional<Error> parse_json(std::string_view text, const std::string& file, json& out) {
  if (text.size() > kMaxJsonBytes) {
    return error_at(
        text, file, kNoOffset,
        "the JSON input is larger than " + byte_size_text(kMaxJsonBytes) + ", the largest accepted",
        std::string(json_text_rules().too_large_help));
  }
  if (size_t at = find_excess_nesting(text); at != kNoOffset) {
    return error_at(text, file, at,
                    "JSON is nested more than " + std::to_string(kMaxJsonDepth) + " levels deep",
                    "values need only a few levels of nesting; look for unbalanced brackets");
  }
  if (json_root_offset(text) >= text.size()) {
    return error_at(text, file, kNoOffset, "the JSON input is empty");
  }
  DomBuilder builder;
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const std::exception& ex) {  // allocation failure; the parser reports the rest
    return error_at(text, file, kNoOffset, std::string("cannot read JSON: ") + ex.what());
  }
  if (!ok || builder.failed) {
    size_t at = parse_error_offset(text, builder.error_byte);
    std::string message = clean_parse_message(builder.error_what);
    if (message.find("invalid literal") != std::string::npos ||
        message.find("invalid number") != std::string::npos ||
        message.find("number overflow") != std::string::npos) {
      at = word_start(text, at);
    }
    return error_at(text, file, at, std::move(message), parse_help(text, at));
  }
  out = std::move(builder.root);
  return std::nullopt;
}

}  // namespace cotangent::io
