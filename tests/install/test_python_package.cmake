# Installs the Python package tinyflow and runs tf1_program.py with it from a directory outside the
# source and build trees, with neither TINYFLOW_LIB nor LD_LIBRARY_PATH set.
#   MODE=cmake: `cmake --install BINARY_DIR --prefix <tmp>/prefix`, then PYTHONPATH=<prefix>/PYDIR only; also
#               checks that no installed file names the source or build tree and every RUNPATH is safe.
#   MODE=pip:   a venv (--system-site-packages, for Debian's numpy, setuptools and pip) and
#               `pip install --no-build-isolation --no-index SOURCE_DIR/tinyflow_demo`, reusing BINARY_DIR
#               (TINYFLOW_BUILD_DIR); no PYTHONPATH at all.
# Arguments: SOURCE_DIR, BINARY_DIR, PYTHON, MODE, PYDIR (cmake: the package's parent, relative to the
# prefix), HAVE_C (whether the build has the target tinyflow_C; without it the test is skipped).
if(NOT HAVE_C)
  message("SKIP: tinyflow._C is not built (CMake found no Python development headers: apt-get install python3-dev)")
  return()
endif()
if(NOT MODE MATCHES "^(cmake|pip)$")
  message(FATAL_ERROR "MODE must be cmake or pip, not '${MODE}'")
endif()
string(RANDOM LENGTH 10 _tag)
set(_tmp "$ENV{TMPDIR}")
if(NOT _tmp)
  set(_tmp /tmp)
endif()
set(WORK_DIR "${_tmp}/ir-python-${MODE}-${_tag}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/run")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}\n(files kept in ${WORK_DIR})")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

set(_clean_env --unset=TINYFLOW_LIB --unset=LD_LIBRARY_PATH --unset=PYTHONHOME --unset=PYTHONPATH
               --unset=PYTHONSTARTUP PYTHONDONTWRITEBYTECODE=1 OMP_WAIT_POLICY=PASSIVE)
if(MODE STREQUAL "cmake")
  set(_prefix "${WORK_DIR}/prefix")
  run(${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${_prefix})
  set(_package "${_prefix}/${PYDIR}/tinyflow")
  file(GLOB _modules "${_package}/_C.*.so")
  if(NOT EXISTS "${_package}/__init__.py" OR NOT _modules)
    message(FATAL_ERROR "the install has no tinyflow package with its native module _C in ${_package}")
  endif()
  # Self-sufficient: no installed file names the source or build tree (text, CMake files, ELF strings, RUNPATHs).
  foreach(_tree "${SOURCE_DIR}" "${BINARY_DIR}")
    execute_process(COMMAND grep -rlF "${_tree}" "${_prefix}" OUTPUT_VARIABLE _hits RESULT_VARIABLE _grep_rc)
    if(_grep_rc EQUAL 0)
      message(FATAL_ERROR "installed files name ${_tree}:\n${_hits}")
    endif()
  endforeach()
  run(${CMAKE_COMMAND} "-DDIRS=${_prefix}" -P ${SOURCE_DIR}/cmake/check_runpath.cmake)
  set(_env ${_clean_env} PYTHONPATH=${_prefix}/${PYDIR})
  set(_python "${PYTHON}")
  set(_roots "${_prefix}/${PYDIR}" "${_prefix}")
else()  # pip
  set(_venv "${WORK_DIR}/venv")
  run(${PYTHON} -m venv --without-pip --system-site-packages ${_venv})
  set(_python "${_venv}/bin/python")
  run(${CMAKE_COMMAND} -E env ${_clean_env} PIP_NO_INPUT=1 TINYFLOW_BUILD_DIR=${BINARY_DIR}
      ${_python} -m pip install --no-build-isolation --no-index --no-deps --no-cache-dir -q
      ${SOURCE_DIR}/tinyflow_demo)
  set(_env ${_clean_env})
  set(_roots "${_venv}" "${_venv}")
endif()

file(COPY ${CMAKE_CURRENT_LIST_DIR}/tf1_program.py DESTINATION ${WORK_DIR}/run)
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${_env} ${_python} ${WORK_DIR}/run/tf1_program.py ${_roots}
                WORKING_DIRECTORY ${WORK_DIR}/run RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "tf1_program: OK")
  message(FATAL_ERROR "tf1_program.py failed (${rc}) with the installed package:\n${out}\n${err}\n"
                      "(files kept in ${WORK_DIR})")
endif()
message("${out}")
file(REMOVE_RECURSE "${WORK_DIR}")
