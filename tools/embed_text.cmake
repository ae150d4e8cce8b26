# Writes the text of the files IN (a comma-separated list) into a C++ source file OUT as one raw
# string literal, the std::string_view NAME in namespace NS; `#pragma once` lines are dropped
# (the text becomes part of a translation unit).
set(TEXT "")
string(REPLACE "," ";" FILES "${IN}")
foreach(f ${FILES})
  file(READ ${f} PART)
  string(REPLACE "#pragma once\n" "" PART "${PART}")
  string(APPEND TEXT "${PART}")
endforeach()
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\n#include <string_view>\nnamespace ${NS} {\nextern const std::string_view ${NAME};\nconst std::string_view ${NAME} = R\"cotembed(${TEXT})cotembed\";\n}  // namespace ${NS}\n")
