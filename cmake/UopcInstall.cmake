# The install rules (included when UOPC_INSTALL is on).  `cmake --install
# BUILD [--prefix P]` puts, with GNUInstallDirs' names:
#   lib/libuopc.so.0.3.0, lib/libuopc.so.0.3, lib/libuopc.so shared (SONAME libuopc.so.0.3)
#   lib/libuopc.a                                            static
#   include/uopc/*.h                                         the public headers (version.h generated)
#   bin/uopc                                                 the CLI
#   lib/cmake/uopc/                                          find_package(uopc): uopc::uopc (shared),
#                                                            uopc::uopc_static (with its link dependencies)
#   lib/pkgconfig/uopc.pc, uopc-static.pc                    pkg-config
# Written against the targets, not the source folders: the library's sources
# may move between lib/ folders without a change here.
include(CMakePackageConfigHelpers)

set(UOPC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/uopc)

install(TARGETS uopc uopc_static EXPORT uopcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS uopc_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/uopc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${UOPC_GENERATED_INCLUDE}/uopc/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/uopc)

# The CMake package: targets, config (finds zlib and threads; LLVM is linked
# by the file uopc was built with), version (0.x: same minor version).
install(EXPORT uopcTargets NAMESPACE uopc:: DESTINATION ${UOPC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/uopcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/uopcConfig.cmake INSTALL_DESTINATION ${UOPC_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/uopcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/uopcConfig.cmake ${PROJECT_BINARY_DIR}/uopcConfigVersion.cmake
  DESTINATION ${UOPC_CMAKE_DIR})

# pkg-config.  The prefix is the one given at install time (cmake --install
# --prefix), so the .pc files are written then.  uopc.pc is the shared
# library; its Libs.private/Requires.private are what libuopc.a needs, so
# `pkg-config --static --libs uopc` lists them.  GNU ld takes libuopc.so over
# libuopc.a from the same directory whatever follows, so uopc-static.pc names
# the archive itself: `pkg-config --cflags --libs uopc-static` links
# libuopc.a (docs/decisions.md).
set(UOPC_PC_LIBS_PRIVATE "${UOPC_LLVM_LIBRARY} -lm -lstdc++ -pthread")
set(UOPC_PC_REQUIRES_PRIVATE "zlib")
foreach(d LIBDIR INCLUDEDIR)  # relative to ${prefix} unless absolute
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(UOPC_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(UOPC_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
foreach(pc uopc uopc-static)
  install(CODE "
    set(UOPC_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    set(UOPC_PC_LIBDIR [[${UOPC_PC_LIBDIR}]])
    set(UOPC_PC_INCLUDEDIR [[${UOPC_PC_INCLUDEDIR}]])
    set(PROJECT_VERSION [[${PROJECT_VERSION}]])
    set(UOPC_PC_LIBS_PRIVATE [[${UOPC_PC_LIBS_PRIVATE}]])
    set(UOPC_PC_REQUIRES_PRIVATE [[${UOPC_PC_REQUIRES_PRIVATE}]])
    configure_file([[${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in]] [[${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc]] @ONLY)
  ")
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
