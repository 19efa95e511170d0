# Lean sanitizer builds of the threading code, in the Release tree and not built by default
# (EXCLUDE_FROM_ALL). ir_add_lean_sanitized(<suffix> <flags>...) defines
#   ir_<suffix>                 libir_<suffix>.so: the layers whose code threads share (core: NDArray
#                               storage, the registries; runtime_lazy: lazy arrays, Contexts, tapes;
#                               runtime_executor: Session, executor, plan cache, variable store;
#                               runtime_cpu: the kernel compiler and cache; c_api: handles) compiled
#                               again with <flags>, linked with this build's objects of the others
#   ir_threads_tests_<suffix>   tests/threads compiled with <flags> over it (IR_SANITIZED_TEST defined)
# So ~60 files are compiled instead of the whole tree: scripts/tsan_test.sh (CI: a fresh 2-core
# machine, no ccache) builds the "tsan" pair; the "asan" pair is a quick AddressSanitizer check of
# the same code by hand (CI's build-asan tree runs ir_threads_tests fully instrumented). Accesses
# inside the other layers (ops, passes, codegen) are not checked, their pthread synchronization is
# seen; a tree configured with -DIR_SANITIZE=... instruments every layer.
set(IR_LEAN_SANITIZED_LAYERS core runtime_executor runtime_lazy runtime_cpu c_api)

function(ir_add_lean_sanitized suffix)
  set(_flags ${ARGN} -fno-omit-frame-pointer -O1 -g1)
  set(_objects ${IR_LAYER_OBJECTS})
  foreach(_layer ${IR_LEAN_SANITIZED_LAYERS})
    get_target_property(_sources ir_${_layer} SOURCES)
    add_library(ir_${_layer}_${suffix} OBJECT EXCLUDE_FROM_ALL ${_sources})
    # The layer's include path (include/ and the layers it may use) and dependencies, without
    # ir_layer_flags' -O3 (which would come after -O1 and win).
    target_include_directories(ir_${_layer}_${suffix} PRIVATE ${CMAKE_SOURCE_DIR}/include ${IR_LAYER_DIR}/${_layer})
    target_link_libraries(ir_${_layer}_${suffix} PRIVATE dmlc::dmlc Threads::Threads OpenMP::OpenMP_CXX)
    target_compile_options(ir_${_layer}_${suffix} PRIVATE ${_flags} -fno-math-errno)
    target_compile_definitions(ir_${_layer}_${suffix} PRIVATE $<TARGET_PROPERTY:ir_${_layer},COMPILE_DEFINITIONS>)
    string(REPLACE "$<TARGET_OBJECTS:ir_${_layer}>" "$<TARGET_OBJECTS:ir_${_layer}_${suffix}>" _objects "${_objects}")
  endforeach()
  add_library(ir_${suffix} SHARED EXCLUDE_FROM_ALL ${_objects})
  get_target_property(_libs ir LINK_LIBRARIES)
  target_link_libraries(ir_${suffix} PRIVATE ${_libs})
  target_link_options(ir_${suffix} PRIVATE ${ARGN})
  set_target_properties(ir_${suffix} PROPERTIES LINKER_LANGUAGE CXX)
  foreach(_property INSTALL_RPATH BUILD_WITH_INSTALL_RPATH)  # (libir's RUNPATH, e.g. NVRTC's directory)
    get_target_property(_value ir ${_property})
    if(_value)
      set_target_properties(ir_${suffix} PROPERTIES ${_property} "${_value}")
    endif()
  endforeach()

  file(GLOB _tests CONFIGURE_DEPENDS ${IR_THREADS_TEST_SOURCES})
  add_executable(ir_threads_tests_${suffix} EXCLUDE_FROM_ALL ${_tests})
  target_link_libraries(ir_threads_tests_${suffix} PRIVATE ir_${suffix} GTest::gtest GTest::gtest_main dmlc::dmlc
                        Threads::Threads OpenMP::OpenMP_CXX)
  target_include_directories(ir_threads_tests_${suffix} PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/tests
                             ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(ir_threads_tests_${suffix} PRIVATE ${_flags})
  target_compile_definitions(ir_threads_tests_${suffix} PRIVATE IR_SANITIZED_TEST=1)
  target_link_options(ir_threads_tests_${suffix} PRIVATE ${ARGN})
  # tinyflow._C over it (lib/_C_<suffix>...so, without the TensorFlow formats): TINYFLOW_LIB=libir_<suffix>.so
  # makes tinyflow load it (scripts/tsan_test.sh runs Python threads over the sanitized layers).
  if(COMMAND tinyflow_c_module)
    tinyflow_c_module(tinyflow_C_${suffix} _C_${suffix} ir_${suffix})
    set_target_properties(tinyflow_C_${suffix} PROPERTIES EXCLUDE_FROM_ALL ON)
    target_link_options(tinyflow_C_${suffix} PRIVATE ${ARGN})
  endif()
endfunction()
