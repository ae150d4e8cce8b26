// Whether an open file is a complete shared object for this host, checked from its ELF headers
// before `dlopen` maps it: a truncated object would be mapped past its end and fault (SIGBUS)
// or fail with "file too short" on every later run (docs/design.md §10, the compile cache).
#pragma once

#include <cstdint>
#include <string>

namespace cot::codegen {

// Empty when the file `fd` (of `size` bytes) is a 64-bit little-endian ELF shared object whose
// program headers, loaded segments and section headers all lie inside the file; else what is
// wrong with it.
std::string elf_shared_object_problem(int fd, uint64_t size);

}  // namespace cot::codegen
