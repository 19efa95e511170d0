# Layers of libir: one OBJECT library per source folder, all linked into the one shared library
# (so registries exist once). A layer sees include/ and a generated directory
# ${IR_LAYER_DIR}/<layer>/ holding symlinks named after only the layers it may use, so
# `#include "codegen/kernel_builder.h"` compiles where codegen is allowed and fails elsewhere.
# The allowed matrix is written once, in CMakeLists.txt ("---- layers").

set(IR_LAYER_DIR ${CMAKE_BINARY_DIR}/layers)
# Rebuilt at every configure: a header removed from src/runtime leaves no stale link behind.
file(REMOVE_RECURSE ${IR_LAYER_DIR})

# Compile settings every layer shares; IR_LAYER_OBJECTS collects the object files for `ir`.
add_library(ir_layer_flags INTERFACE)
target_include_directories(ir_layer_flags INTERFACE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(ir_layer_flags INTERFACE dmlc::dmlc Threads::Threads OpenMP::OpenMP_CXX)
# Kernels: optimize hard, and let loops over math functions vectorize (no errno writes). Sanitizer
# trees keep the CXXFLAGS optimization (scripts/test.sh: -O1): -O3 with ASan+UBSan compiles ~1.7x
# slower (the 1,167-line src/ops/nn_extra.cc of issue 29: 73 s against 42 s) and the instrumented
# tests check memory, not speed.
if(IR_SANITIZE)
  target_compile_options(ir_layer_flags INTERFACE -fno-math-errno)
else()
  target_compile_options(ir_layer_flags INTERFACE $<$<NOT:$<CONFIG:Debug>>:-O3> -fno-math-errno)
endif()
set(IR_LAYER_OBJECTS "")
# The matrix as configured, for the checks (scripts/check_layer_symbols.py, scripts/architecture_map.py):
# ${IR_LAYER_MATRIX} gets one line per layer, "<layer> <folder> <used layers>...", and
# ${IR_LAYER_DIR}/<layer>.objects the paths of the layer's object files (written at generate time).
set(IR_LAYER_MATRIX ${IR_LAYER_DIR}/matrix.txt)
file(WRITE ${IR_LAYER_MATRIX} "# ir_add_layer() calls of CMakeLists.txt: <layer> <folder> <used layers>...\n")

# The source folder of a layer: runtime_cpu -> runtime/cpu, ops -> ops (c_api keeps its '_').
function(_ir_layer_folder layer out)
  string(REGEX REPLACE "^runtime_" "runtime/" _folder "${layer}")
  set(${out} "${_folder}" PARENT_SCOPE)
endfunction()

# Makes layer `used` visible in the include directory `dir` (runtime_x as runtime/x, never all of
# src/runtime/). A link may dangle (a backend's folder not built): it resolves once it exists.
function(_ir_link_layer dir used)
  _ir_layer_folder(${used} _folder)
  get_filename_component(_parent ${dir}/${_folder} DIRECTORY)
  file(MAKE_DIRECTORY ${_parent})
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/src/${_folder} ${dir}/${_folder} SYMBOLIC)
endfunction()

# ir_add_layer(<layer> [USES <layers>...] [LIBS <link libraries>...])
# Compiles src/<folder>/*.cc (ops: src/ops/**/*.cc) as OBJECT library ir_<layer> (none when the folder has no
# sources yet) whose include path is include/ + ${IR_LAYER_DIR}/<layer> (itself and USES).
function(ir_add_layer layer)
  cmake_parse_arguments(L "" "" "USES;LIBS" ${ARGN})
  set(_dir ${IR_LAYER_DIR}/${layer})
  file(MAKE_DIRECTORY ${_dir})
  foreach(_used ${layer} ${L_USES})
    _ir_link_layer(${_dir} ${_used})
  endforeach()
  _ir_layer_folder(${layer} _folder)
  string(REPLACE ";" " " _uses "${L_USES}")
  file(APPEND ${IR_LAYER_MATRIX} "${layer} ${_folder} ${_uses}\n")
  # ops may keep an op family in a folder of its own (src/ops/<family>/): one layer still. The
  # runtime's sub-folders are layers of their own, so only ops globs recursively.
  if(layer STREQUAL "ops")
    file(GLOB_RECURSE _sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${_folder}/*.cc)
  else()
    file(GLOB _sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${_folder}/*.cc)
  endif()
  if(NOT _sources)
    return()
  endif()
  add_library(ir_${layer} OBJECT ${_sources})
  target_include_directories(ir_${layer} PRIVATE ${_dir})
  target_link_libraries(ir_${layer} PRIVATE ir_layer_flags ${L_LIBS})
  file(GENERATE OUTPUT ${IR_LAYER_DIR}/${layer}.objects CONTENT "$<JOIN:$<TARGET_OBJECTS:ir_${layer}>,\n>\n")
  set(IR_LAYER_OBJECTS ${IR_LAYER_OBJECTS} $<TARGET_OBJECTS:ir_${layer}> PARENT_SCOPE)
endfunction()
