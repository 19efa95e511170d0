# The MPI transports of the collective engine (src/runtime/mpi): one SHARED plugin per MPI
# implementation, libir_mpi_openmpi.so (pkg-config ompi-c) and libir_mpi_mpich.so (mpich),
# next to libir, which dlopens the one the launcher asks for. Debian names both headers mpi.h:
# each plugin gets its own implementation's include directories, never the mpi.h alternative.
# IR_MPI: "auto" (every implementation found), "openmpi", "mpich", "openmpi;mpich" or "OFF".
set(IR_MPI "auto" CACHE STRING "MPI transports to build: auto, openmpi, mpich, 'openmpi;mpich' or OFF")
set(IR_MPI_BUILT "")
include(GNUInstallDirs)
find_package(PkgConfig QUIET)
if(IR_MPI STREQUAL "auto")
  set(_ir_mpi_wanted openmpi mpich)
elseif(IR_MPI)
  set(_ir_mpi_wanted ${IR_MPI})
else()
  set(_ir_mpi_wanted "")
endif()
foreach(_impl ${_ir_mpi_wanted})
  if(_impl STREQUAL "openmpi")
    set(_module ompi-c)
  elseif(_impl STREQUAL "mpich")
    set(_module mpich)
  else()
    message(FATAL_ERROR "IR_MPI: unknown MPI implementation '${_impl}' (known: openmpi, mpich)")
  endif()
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(IR_MPI_${_impl} QUIET IMPORTED_TARGET ${_module})
  endif()
  if(NOT IR_MPI_${_impl}_FOUND)
    if(NOT IR_MPI STREQUAL "auto")
      message(FATAL_ERROR "IR_MPI asks for ${_impl}, but pkg-config finds no ${_module} (install its -dev package)")
    endif()
    continue()
  endif()
  add_library(ir_mpi_${_impl} SHARED ${CMAKE_SOURCE_DIR}/src/runtime/mpi/mpi_transport.cc)
  target_include_directories(ir_mpi_${_impl} PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(ir_mpi_${_impl} PRIVATE PkgConfig::IR_MPI_${_impl})
  # The C API only: no C++ bindings (libmpi_cxx).
  target_compile_definitions(ir_mpi_${_impl} PRIVATE IR_MPI_NAME="${_impl}" OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  # Only MPI's symbols: the plugin must load into a process whose libir was opened RTLD_LOCAL.
  if(NOT IR_SANITIZE)
    target_link_options(ir_mpi_${_impl} PRIVATE -Wl,--no-undefined)
  endif()
  # MPI's library directory as the one absolute RUNPATH, alike in the build and install trees
  # (a build RUNPATH would be padded with ':', an empty element: the current directory).
  set_target_properties(ir_mpi_${_impl} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_LIBRARY_OUTPUT_DIRECTORY}
                        INSTALL_RPATH "${IR_MPI_${_impl}_LIBRARY_DIRS}" BUILD_WITH_INSTALL_RPATH ON)
  install(TARGETS ir_mpi_${_impl} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  # Building libir builds its transports (they never link to it: no cycle).
  add_dependencies(ir ir_mpi_${_impl})
  list(APPEND IR_MPI_BUILT ${_impl})
endforeach()
if(IR_MPI_BUILT)
  message(STATUS "IR_MPI: ${IR_MPI_BUILT}")
else()
  message(STATUS "IR_MPI: none (collectives run on the one-process local transport only)")
endif()
