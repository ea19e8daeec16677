# ctest runpath_has_no_cwd: cmake -DFILES=a;b -DREADELF=readelf -P CheckRunpath.cmake
# Fails when an ELF file's RPATH or RUNPATH has an empty entry (a leading,
# trailing or doubled ':'), or an entry that is not an absolute path or
# $ORIGIN-based: the dynamic loader would look for libraries in the current
# directory.
if(NOT READELF)
  set(READELF readelf)
endif()
if(NOT FILES)
  message(FATAL_ERROR "CheckRunpath: no files given")
endif()
set(bad "")
foreach(f IN LISTS FILES)
  execute_process(COMMAND ${READELF} -d ${f} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${READELF} -d ${f} failed (${rc})")
  endif()
  string(REGEX MATCHALL "\\((RPATH|RUNPATH)\\)[^\n]*\\[[^\n]*\\]" lines "${out}")
  foreach(l IN LISTS lines)
    string(REGEX REPLACE ".*\\[(.*)\\]" "\\1" path "${l}")
    message(STATUS "${f}: ${path}")
    string(REPLACE ":" ";" entries "${path}") # foreach keeps the empty entries
    foreach(e IN LISTS entries)
      if(NOT e MATCHES "^(/|\\$ORIGIN)")
        list(APPEND bad "${f}: entry '${e}' of '${path}'")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad)
  list(JOIN bad "\n  " msg)
  message(FATAL_ERROR "library search paths that reach the current directory:\n  ${msg}")
endif()
