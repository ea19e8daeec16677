# Dependencies, found the CMake way.  All come from Debian packages:
#   cmake g++ llvm-19-dev zlib1g-dev libgtest-dev libbenchmark-dev clang-19 libclang-rt-19-dev
# (pkg-config only for scripts/test.sh's install stage)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
# find_package(LLVM 19 CONFIG) is rejected by LLVM's own version file, so find
# it by location and check the major version ourselves.
find_package(LLVM CONFIG REQUIRED HINTS /usr/lib/llvm-19 /usr/lib/llvm-19/lib/cmake/llvm)
if(NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "uopc needs LLVM 19, found ${LLVM_PACKAGE_VERSION} at ${LLVM_DIR}")
endif()
message(STATUS "uopc: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

function(uopc_use_deps t)
  target_include_directories(${t} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS} ${ZLIB_INCLUDE_DIRS})
  target_compile_definitions(${t} PRIVATE ${LLVM_DEFINITIONS})
endfunction()

# The shared libLLVM's file, for the installed package and uopc.pc: a user of
# the installed libuopc.a links the same libLLVM that uopc was built with,
# without loading LLVM's CMake package.
get_target_property(_cfgs LLVM IMPORTED_CONFIGURATIONS)
set(UOPC_LLVM_LIBRARY "")
foreach(_cfg IN LISTS _cfgs ITEMS NOCONFIG)
  get_target_property(_loc LLVM IMPORTED_LOCATION_${_cfg})
  if(_loc AND NOT UOPC_LLVM_LIBRARY)
    set(UOPC_LLVM_LIBRARY ${_loc})
  endif()
endforeach()
if(NOT UOPC_LLVM_LIBRARY)
  get_target_property(UOPC_LLVM_LIBRARY LLVM IMPORTED_LOCATION)
endif()
if(NOT UOPC_LLVM_LIBRARY)
  message(FATAL_ERROR "uopc: cannot find the file of LLVM's shared library (target LLVM in ${LLVM_DIR})")
endif()

# Link LLVM, zlib, threads and libm: PRIVATE for the shared libuopc, PUBLIC
# for the static one.  LLVM is the shared libLLVM (one library, no static
# components; in the installed package by its file: see UOPC_LLVM_LIBRARY),
# or the library files given after scope (the CLI's static LLVM, below).
function(uopc_link_deps t scope)
  if(ARGN)
    target_link_libraries(${t} ${scope} ${ARGN})
  else()
    target_link_directories(${t} ${scope} $<BUILD_INTERFACE:${LLVM_LIBRARY_DIRS}>)
    target_link_libraries(${t} ${scope} $<BUILD_INTERFACE:LLVM> $<INSTALL_INTERFACE:${UOPC_LLVM_LIBRARY}>)
  endif()
  target_link_libraries(${t} ${scope} ZLIB::ZLIB Threads::Threads m stdc++)  # stdc++: lib/jit/link.cpp, pool_mm.cpp, dual_mm.cpp
endfunction()

# The CLI links LLVM's static component libraries (llvm-19-dev ships them) when
# UOPC_CLI_STATIC_LLVM is on and they are all there: a process that loads the
# shared libLLVM spends ~35 ms before main applying its 341,586 relocations
# (ld.so), once per CLI invocation (uopc --version 62 -> 25 ms, a jit-run disk
# hit 67 -> 29 ms; docs/decisions.md, stop 37).  The libraries themselves
# (libuopc.so, libuopc.a) link the shared libLLVM as before.  Sets
# UOPC_CLI_LLVM_LIBS to the files (empty: link the shared libLLVM).
option(UOPC_CLI_STATIC_LLVM "Link the uopc CLI with LLVM's static libraries (a faster start)" ON)
set(UOPC_CLI_LLVM_LIBS "")
if(NOT UOPC_CLI_STATIC_LLVM)
  message(STATUS "uopc: the CLI links the shared libLLVM (UOPC_CLI_STATIC_LLVM=OFF)")
else()
  find_program(UOPC_LLVM_CONFIG NAMES llvm-config-19 llvm-config HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  # LLVM's Support library calls zstd (Debian's libzstd1, a dependency of
  # libllvm19; its libzstd.so link is in libzstd-dev, which we do not need)
  find_library(UOPC_ZSTD_LIBRARY NAMES zstd libzstd.so.1)
  set(_why "")
  if(NOT UOPC_LLVM_CONFIG)
    set(_why "no llvm-config in ${LLVM_TOOLS_BINARY_DIR}")
  elseif(NOT UOPC_ZSTD_LIBRARY)
    set(_why "no libzstd")
  else()
    execute_process(COMMAND ${UOPC_LLVM_CONFIG} --link-static --libfiles orcjit native passes
                    OUTPUT_VARIABLE _files RESULT_VARIABLE _rc ERROR_VARIABLE _err OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _rc EQUAL 0)
      set(_why "llvm-config --link-static: ${_err}")
    else()
      separate_arguments(_files UNIX_COMMAND "${_files}")
      foreach(_f IN LISTS _files)
        if(NOT EXISTS ${_f})
          set(_why "${_f} is missing")
        endif()
      endforeach()
    endif()
  endif()
  if(_why)
    message(STATUS "uopc: the CLI links the shared libLLVM (${_why})")
  else()
    set(UOPC_CLI_LLVM_LIBS ${_files} ${UOPC_ZSTD_LIBRARY})
    list(LENGTH _files _n)
    message(STATUS "uopc: the CLI links ${_n} static LLVM libraries")
  endif()
endif()
