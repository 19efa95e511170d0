# ---- install: the TensorFlow frontend and the Python package tinyflow ----------------------
# `cmake --install build --prefix P` puts, beside libir, include/ir and the CMake package:
#   P/lib/libir_tensorflow.so and P/include/ir_tf/ (ir::ir_tensorflow in find_package(ir)),
#   P/<IR_PYTHON_INSTALL_DIR>/tinyflow/: every .py of tinyflow_demo/tinyflow and the native module _C.
# Nothing installed points into the source or build tree: the libraries find each other by $ORIGIN
# (ctest Install.PythonPackage checks it).
include(GNUInstallDirs)

# Where Debian's python3 looks (sys.path): /usr/lib/python3/dist-packages for the prefix /usr,
# /usr/local/lib/python3.<minor>/dist-packages for /usr/local. lib/python3.<minor>/dist-packages is on
# sys.path under both prefixes, so it is the default for every prefix but /usr.
set(IR_PYTHON_INSTALL_DIR "" CACHE STRING
    "Where tinyflow is installed, relative to the prefix (empty: Debian's directory for CMAKE_INSTALL_PREFIX)")
if(IR_PYTHON_INSTALL_DIR)
  set(_ir_pydir "${IR_PYTHON_INSTALL_DIR}")
elseif(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_ir_pydir lib/python3/dist-packages)
else()
  if(Python3_EXECUTABLE)  # the Python tinyflow._C is built for (tinyflow_demo/csrc)
    set(_ir_python "${Python3_EXECUTABLE}")
  else()
    find_program(_ir_python NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  endif()
  set(_ir_pyver "")
  if(_ir_python)
    execute_process(COMMAND "${_ir_python}" -c "import sys; print('%d.%d' % sys.version_info[:2])"
                    OUTPUT_VARIABLE _ir_pyver OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(_ir_pyver)
    set(_ir_pydir lib/python${_ir_pyver}/dist-packages)
  else()
    set(_ir_pydir lib/python3/dist-packages)
  endif()
endif()
set(IR_PYTHON_DIR "${_ir_pydir}")  # as used: relative to the prefix (or absolute, when set so)
set(IR_PYTHON_PACKAGE_DIR "${IR_PYTHON_DIR}/tinyflow")
message(STATUS "IR_PYTHON_INSTALL_DIR: ${IR_PYTHON_DIR}")

# libir_tensorflow finds libir beside it, in the build tree (lib/), an installed prefix (lib/) and
# the pip package (tinyflow/): $ORIGIN alike in all three, so the build RUNPATH is never padded for
# rewriting (padding is an empty element: the current directory; ctest Build.NoEmptyOrRelativeRunpath).
set_target_properties(ir_tensorflow PROPERTIES INSTALL_RPATH "$ORIGIN" BUILD_WITH_INSTALL_RPATH ON)
install(TARGETS ir_tensorflow EXPORT irTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/frontends/tensorflow/include/ir_tf DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The Python sources by directory (modules come and go), without caches or anything but .py. The package
# directory an earlier install left is removed first, as pip does, so that no deleted module lingers there.
if(IS_ABSOLUTE "${IR_PYTHON_PACKAGE_DIR}")
  install(CODE "file(REMOVE_RECURSE \"\$ENV{DESTDIR}${IR_PYTHON_PACKAGE_DIR}\")")
else()
  install(CODE "file(REMOVE_RECURSE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${IR_PYTHON_PACKAGE_DIR}\")")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tinyflow_demo/tinyflow/ DESTINATION ${IR_PYTHON_PACKAGE_DIR}
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

# tinyflow._C: one RUNPATH for every layout, so no file is rewritten: $ORIGIN (the build tree's lib/,
# and the pip package, where libir lies beside _C), then the prefix's lib directory seen from the
# installed package (e.g. $ORIGIN/../../.. from lib/python3.11/dist-packages/tinyflow).
if(TARGET tinyflow_C)
  if(IS_ABSOLUTE "${IR_PYTHON_PACKAGE_DIR}")
    set(_ir_pkg_full "${IR_PYTHON_PACKAGE_DIR}")
  else()
    set(_ir_pkg_full "${CMAKE_INSTALL_PREFIX}/${IR_PYTHON_PACKAGE_DIR}")
  endif()
  file(RELATIVE_PATH _ir_pkg_to_lib "${_ir_pkg_full}" "${CMAKE_INSTALL_FULL_LIBDIR}")
  string(REGEX REPLACE "/$" "" _ir_pkg_to_lib "${_ir_pkg_to_lib}")
  set_target_properties(tinyflow_C PROPERTIES INSTALL_RPATH "$ORIGIN;$ORIGIN/${_ir_pkg_to_lib}"
                        BUILD_WITH_INSTALL_RPATH ON)
  install(TARGETS tinyflow_C LIBRARY DESTINATION ${IR_PYTHON_PACKAGE_DIR})
endif()

# What `import tinyflow` loads, as one target (scripts/demo.sh, tinyflow_demo/setup.py): libir (with
# its MPI transport plugins), libir_tensorflow and, when Python's headers are there, tinyflow._C.
add_custom_target(tinyflow_native)
add_dependencies(tinyflow_native ir ir_tensorflow)
if(TARGET tinyflow_C)
  add_dependencies(tinyflow_native tinyflow_C)
endif()
