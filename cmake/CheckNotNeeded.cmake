# ctest cli_links_llvm_statically:
#   cmake -DFILE=f -DPATTERN=regex -DREADELF=readelf -P CheckNotNeeded.cmake
# Fails when the ELF file f needs (DT_NEEDED) a shared library whose name
# matches PATTERN: the CLI linked with LLVM's static libraries must not load
# libLLVM.so at start (docs/decisions.md, "The CLI links LLVM statically").
if(NOT READELF)
  set(READELF readelf)
endif()
if(NOT FILE OR NOT PATTERN)
  message(FATAL_ERROR "CheckNotNeeded: FILE and PATTERN are required")
endif()
execute_process(COMMAND ${READELF} -d ${FILE} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${READELF} -d ${FILE} failed (${rc})")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^\n]*\\]" lines "${out}")
if(NOT lines)
  message(FATAL_ERROR "${FILE}: no NEEDED entries found in readelf's output")
endif()
foreach(l IN LISTS lines)
  string(REGEX REPLACE ".*\\[(.*)\\]" "\\1" lib "${l}")
  message(STATUS "${FILE} needs ${lib}")
  if(lib MATCHES "${PATTERN}")
    message(FATAL_ERROR "${FILE} needs ${lib} (matches '${PATTERN}')")
  endif()
endforeach()
