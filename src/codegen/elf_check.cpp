#include "codegen/elf_check.h"

#include <elf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace cot::codegen {

namespace {

// Reads exactly `n` bytes at `offset`; false on a short read or an error.
bool read_at(int fd, void* out, size_t n, uint64_t offset) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = pread(fd, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

// Whether [offset, offset + count * entry) lies inside a file of `size` bytes, without
// overflowing.
bool inside(uint64_t offset, uint64_t count, uint64_t entry, uint64_t size) {
  if (offset > size) return false;
  if (entry != 0 && count > (size - offset) / entry) return false;
  return true;
}

}  // namespace

std::string elf_shared_object_problem(int fd, uint64_t size) {
  Elf64_Ehdr eh;
  if (size < sizeof eh || !read_at(fd, &eh, sizeof eh, 0)) {
    return "it is shorter than an ELF header (" + std::to_string(size) + " bytes)";
  }
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return "it is not an ELF file";
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    return "it is not a 64-bit little-endian ELF file";
  }
  if (eh.e_type != ET_DYN) return "it is not a shared object";
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
      !inside(eh.e_phoff, eh.e_phnum, eh.e_phentsize, size)) {
    return "its program headers do not lie inside its " + std::to_string(size) + " bytes";
  }
  // The linker writes the section headers last: a file cut short anywhere loses them.
  if (eh.e_shnum != 0 && (eh.e_shentsize != sizeof(Elf64_Shdr) ||
                          !inside(eh.e_shoff, eh.e_shnum, eh.e_shentsize, size))) {
    return "its section headers do not lie inside its " + std::to_string(size) +
           " bytes (it was cut short)";
  }
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!read_at(fd, ph.data(), ph.size() * sizeof(Elf64_Phdr), eh.e_phoff)) {
    return "its program headers cannot be read";
  }
  for (const Elf64_Phdr& p : ph) {
    if ((p.p_type == PT_LOAD || p.p_type == PT_DYNAMIC) &&
        !inside(p.p_offset, 1, p.p_filesz, size)) {
      return "a segment runs past its end at " + std::to_string(size) + " bytes (it was cut short)";
    }
  }
  return "";
}

}  // namespace cot::codegen
