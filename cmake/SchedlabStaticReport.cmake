# Static resource report: every registered kernel source (SCHEDLAB_KERNEL_SOURCES, see
# SchedlabKernels.cmake) for sm_90a (SCHEDLAB_SASS_REPORT: read from the CUDA build's objects,
# or compiled with nvcc where there are none) and for gfx942 / gfx950 with clang-22
# (SCHEDLAB_AMD_ISA_CHECK), then registers, spills, shared memory and theoretical occupancy
# per kernel. Only the compilers are needed, not a GPU or a GPU backend, so this works in the
# `none` configuration too.
#
#   cmake --build <build> --target static_report   ->  <build>/static_report/resources.md
#
# With tests enabled, ctest's `static_report` (labels cpu;static) runs the same with
# --require for every target whose compiler was found here: a failed compile, or a kernel
# source that yields no kernel for such a target, fails it.
# Included last by the top-level CMakeLists.txt, once every kernel source is registered.

if(NOT Python3_Interpreter_FOUND)  # looked for by SchedlabKernels.cmake
  message(STATUS "Static report: no Python 3 interpreter, target static_report not available")
  return()
endif()

get_filename_component(_schedlab_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)  # the include root
set(_report_script ${_schedlab_root}/scripts/resource_report.py)
set(_report_targets)
set(_report_tools)
# Uses the compiler in `path_var` for `targets` when it was found; says which rows are
# missing when it was not.
macro(_schedlab_report_compiler path_var flag targets)
  if(${path_var})
    list(APPEND _report_targets ${targets})
    list(APPEND _report_tools ${flag} ${${path_var}})
  else()
    message(STATUS "Static report: no compiler for ${flag} found, no ${targets} rows")
  endif()
endmacro()
if(SCHEDLAB_SASS_REPORT)
  if(CMAKE_CUDA_COMPILER)
    set(SCHEDLAB_REPORT_NVCC ${CMAKE_CUDA_COMPILER})
  else()
    find_program(SCHEDLAB_REPORT_NVCC nvcc HINTS ENV CUDA_PATH /usr/local/cuda PATH_SUFFIXES bin)
  endif()
  _schedlab_report_compiler(SCHEDLAB_REPORT_NVCC --nvcc sm_90a)
endif()
if(SCHEDLAB_AMD_ISA_CHECK)
  find_program(SCHEDLAB_REPORT_CLANG clang-22)
  _schedlab_report_compiler(SCHEDLAB_REPORT_CLANG --clang "gfx942;gfx950")
endif()

# The report compiles outside CMake's targets, so definitions that change kernel code are
# passed on here.
set(_report_defines)
if(SCHEDLAB_STALL_PROBES)
  list(APPEND _report_defines -D SCHEDLAB_STALL_PROBES=1)
endif()

get_property(_kernel_sources GLOBAL PROPERTY SCHEDLAB_KERNEL_SOURCES)
list(REMOVE_DUPLICATES _kernel_sources)
list(LENGTH _kernel_sources _kernel_source_count)
set(_entries_file ${CMAKE_BINARY_DIR}/static_report_sources.txt)
string(REPLACE ";" "\n" _entries_text "${_kernel_sources}")
file(CONFIGURE OUTPUT ${_entries_file} CONTENT "${_entries_text}\n" @ONLY)

# The CUDA build's object of each kernel source: the report reads its sm_90a rows from a fresh
# object rather than compiling the source again (scripts/build_objects.py).
get_property(_kernel_objects GLOBAL PROPERTY SCHEDLAB_KERNEL_OBJECTS)
set(_objects_option --build-objects none)
if(_kernel_objects)
  set(_objects_file ${CMAKE_BINARY_DIR}/static_report_objects.txt)
  set(_objects_text "")
  foreach(_line IN LISTS _kernel_objects)
    string(APPEND _objects_text "${_line}\n")
  endforeach()
  file(GENERATE OUTPUT ${_objects_file} CONTENT "${_objects_text}")
  set(_objects_option --build-objects ${_objects_file})
endif()

cmake_host_system_information(RESULT _report_jobs QUERY NUMBER_OF_LOGICAL_CORES)
string(REPLACE ";" "," _report_target_list "${_report_targets}")
if(NOT _report_targets)
  set(_report_shown_targets "none (no compiler found or both options OFF)")
else()
  set(_report_shown_targets ${_report_target_list})
endif()
set(_report_command
    ${Python3_EXECUTABLE} ${_report_script}
    --entries-file ${_entries_file}
    --root ${_schedlab_root}
    -j ${_report_jobs}
    --targets=${_report_target_list}
    ${_objects_option}
    ${_report_tools}
    ${_report_defines})

add_custom_target(static_report
  COMMAND ${_report_command} --out ${CMAKE_BINARY_DIR}/static_report
  WORKING_DIRECTORY ${_schedlab_root}
  USES_TERMINAL
  VERBATIM
  COMMENT "Static resource report of ${_kernel_source_count} kernel source(s) for: ${_report_shown_targets}")
get_property(_kernel_targets GLOBAL PROPERTY SCHEDLAB_KERNEL_TARGETS)
if(_kernel_targets)
  add_dependencies(static_report ${_kernel_targets})  # their objects are the sm_90a input
endif()

if(SCHEDLAB_BUILD_TESTS)
  # Exit status 77 (skipped) when there is nothing to check: no kernel source registered,
  # no target enabled, or no compiler found.
  set(_report_test_command ${_report_command} --out ${CMAKE_BINARY_DIR}/static_report_test --skip-status 77)
  if(_report_targets)
    list(APPEND _report_test_command --require ${_report_target_list})
  endif()
  # SASS needs cuobjdump and nvdisasm (the CUDA toolkit's, or the pip wheels of
  # scripts/requirements-ci.txt); where this Python finds both, a failed dump fails the test.
  if("sm_90a" IN_LIST _report_targets)
    set(_report_sass_tools_found TRUE)
    foreach(_tool cuobjdump nvdisasm)
      execute_process(COMMAND ${Python3_EXECUTABLE} ${_report_script} --find-tool ${_tool}
                      RESULT_VARIABLE _found OUTPUT_QUIET ERROR_QUIET)
      if(NOT _found EQUAL 0)
        set(_report_sass_tools_found FALSE)
        message(STATUS "Static report: ${_tool} not found, the test skips SASS listings (with a note)")
      endif()
    endforeach()
    if(_report_sass_tools_found)
      list(APPEND _report_test_command --require-sass)
    endif()
  endif()
  add_test(NAME static_report COMMAND ${_report_test_command} WORKING_DIRECTORY ${_schedlab_root})
  set_tests_properties(static_report PROPERTIES
    LABELS "cpu;static"
    SKIP_RETURN_CODE 77
    TIMEOUT 3600)
endif()

message(STATUS "Static report: ${_kernel_source_count} kernel source(s); targets: ${_report_shown_targets}")
