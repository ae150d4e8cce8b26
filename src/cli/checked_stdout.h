// Standard output that remembers why it failed. The CLI's std::cout writes through this buffer
// to the descriptor with write(2); the first failure (a full disk, /dev/full, a closed
// descriptor) is kept with its errno, later output is dropped, and the stream goes bad, so that
// the command exits 1 with the reason instead of 0 with the output lost (docs/design.md §11).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <streambuf>

namespace cot::cli {

class CheckedOutputBuffer : public std::streambuf {
 public:
  explicit CheckedOutputBuffer(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  CheckedOutputBuffer(const CheckedOutputBuffer&) = delete;
  CheckedOutputBuffer& operator=(const CheckedOutputBuffer&) = delete;

  // The errno of the first failed write, 0 when every write so far succeeded.
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  // Writes the buffered bytes; after a failure, drops them.
  bool drain() {
    const char* p = pbase();
    auto left = static_cast<size_t>(pptr() - pbase());
    while (left > 0 && error_ == 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? errno : EIO;
        break;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    setp(buf_, buf_ + sizeof buf_);
    return error_ == 0;
  }

  int fd_;
  int error_ = 0;
  char buf_[1 << 16];
};

}  // namespace cot::cli
