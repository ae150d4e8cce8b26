# Fails the build when a file of src/ (or a public header of include/cotangent/) includes a
# header of a layer it may not use (docs/design.md §1). All sources share the include root src/,
# so include paths alone cannot refuse `#include "ad/..."` in codegen/: this script reads each
# file's #include "..." lines instead. Run by CMakeLists.txt as the target cotangent_layers,
# which every library depends on.
#   SRC    the source tree
#   RULES  the file CMakeLists.txt writes: one line per layer, `layer=used;used;...` (the layers
#          it may use, directly or through them), then `header:cotangent/x.h=layer` lines naming
#          the layer that owns each public header
#   STAMP  touched when every file passes
file(STRINGS ${RULES} lines)
set(layers "")
foreach(line ${lines})
  if(line MATCHES "^header:([^=]+)=(.+)$")
    set(owner_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  elseif(line MATCHES "^([a-z_]+)=(.*)$")
    list(APPEND layers ${CMAKE_MATCH_1})
    set(uses_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  endif()
endforeach()

# The layer a quoted include names: its folder under src/, or the owner of a public header.
function(layer_of include out)
  set(${out} "" PARENT_SCOPE)
  if(DEFINED owner_${include})
    set(${out} ${owner_${include}} PARENT_SCOPE)
  elseif(include MATCHES "^([a-z_]+)/")
    list(FIND layers ${CMAKE_MATCH_1} i)
    if(NOT i EQUAL -1)
      set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
    endif()
  endif()
endfunction()

# Every violation of `file` (a path under SRC), which belongs to `layer`, appended to `errors`.
function(check_file layer file)
  file(STRINGS ${SRC}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  set(allowed ${layer} ${uses_${layer}})
  set(found "")
  foreach(line ${includes})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" inc "${line}")
    layer_of(${inc} target)
    if(target STREQUAL "")
      continue()
    endif()
    list(FIND allowed ${target} i)
    if(i EQUAL -1)
      string(REPLACE ";" ", " may "${uses_${layer}}")
      if(may STREQUAL "")
        set(may "nothing else")
      endif()
      list(APPEND found "  ${file}: #include \"${inc}\": ${layer} may not use ${target}"
                        " (${layer} may use: ${may})\n")
    endif()
  endforeach()
  set(errors ${errors} ${found} PARENT_SCOPE)
endfunction()

set(errors "")
foreach(layer ${layers})
  file(GLOB files RELATIVE ${SRC} ${SRC}/src/${layer}/*.h ${SRC}/src/${layer}/*.cpp)
  foreach(f ${files})
    check_file(${layer} ${f})
  endforeach()
endforeach()
file(GLOB headers RELATIVE ${SRC}/include ${SRC}/include/cotangent/*.h)
foreach(h ${headers})
  if(NOT DEFINED owner_${h})
    list(APPEND errors "  include/${h}: a public header no layer owns (CMakeLists.txt)\n")
  else()
    check_file(${owner_${h}} include/${h})
  endif()
endforeach()

if(errors)
  string(REPLACE ";" "" text "${errors}")
  message(FATAL_ERROR "Layering violation (the allowed uses: docs/design.md §1, CMakeLists.txt):\n"
                      "${text}")
endif()
file(TOUCH ${STAMP})
