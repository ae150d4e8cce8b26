// libFuzzer target: any bytes, as a module, through the whole of Module's load (parse, check,
// optimize, derive) and the printer; `make fuzz` runs it. No input may crash, hang or trip a
// sanitizer; errors must come back as values.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cotangent/cotangent.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = cotangent::Module::from_string(text, "fuzz.cot");
  if (m.ok()) {
    for (const auto& name : m.value().function_names()) (void)m.value().print(name);
  } else {
    (void)m.message();
  }
  return 0;
}
