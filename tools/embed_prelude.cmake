# Writes the prelude's text into a C++ source file as a raw string literal.
file(READ ${IN} TEXT)
file(WRITE ${OUT} "// Generated from prelude/prelude.cot; do not edit.\n#include <string_view>\nnamespace cot {\nextern const std::string_view kPreludeText;\nconst std::string_view kPreludeText = R\"cotprelude(${TEXT})cotprelude\";\n}  // namespace cot\n")
