# Dependencies, found the CMake way.  All come from Debian packages:
#   cmake g++ llvm-19-dev zlib1g-dev libgtest-dev libbenchmark-dev clang-19 libclang-rt-19-dev
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

# Link the shared libLLVM (one library, no static components).
function(uopc_link_deps t)
  target_link_directories(${t} PUBLIC ${LLVM_LIBRARY_DIRS})
  target_link_libraries(${t} PUBLIC LLVM ZLIB::ZLIB Threads::Threads m)
endfunction()
