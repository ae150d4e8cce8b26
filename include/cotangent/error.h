// Errors as values. Every error that reaches a user carries where it is (file, line, column),
// what is wrong, and how to fix it where that is known; `rendered` is the full text a compiler
// would print (location, source line with a caret, help).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cotangent {

struct Error {
  std::string file;  // empty when the error has no source location
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;
  std::string message;
  std::string help;
  std::string rendered;
};

// How many errors to_string renders; past them it says how many more there are (the vector
// itself keeps every error). One more than this is rendered rather than counted.
inline constexpr size_t kErrorsShown = 20;

// Renders errors one after the other, the first kErrorsShown of them.
std::string to_string(const std::vector<Error>& errors);

// A value or the errors that prevented it.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(std::vector<Error> errors) : v_(std::move(errors)) {}       // NOLINT
  Result(Error error) : v_(std::vector<Error>{std::move(error)}) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const std::vector<Error>& errors() const { return std::get<1>(v_); }
  std::string message() const { return ok() ? std::string() : to_string(errors()); }

 private:
  std::variant<T, std::vector<Error>> v_;
};

}  // namespace cotangent
