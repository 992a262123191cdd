# Kernel sources are registered once, with the experiment they belong to, so that the
# GPU build, the AMD ISA check and the static resource report all see the same list.
#
#   schedlab_kernel_library(<target> SOURCES a.cu b.cu [EXPERIMENT name] [LINK libs...] [SM90A_ONLY | AMD_ONLY])
#
# With a GPU backend it builds a static library from the sources (in the backend's
# language); in every configuration it records each source in the global property
# SCHEDLAB_KERNEL_SOURCES as "<experiment>|<absolute path>" for the static report.
# SM90A_ONLY: Hopper-only kernels (wgmma, setmaxnreg): built with the cuda backend alone and
# reported for sm_90a alone ("<experiment>|<path>|sm_90a").
# AMD_ONLY: kernels written for the AMD targets (an AMD realization of an experiment whose
# NVIDIA one is another source): built with the hip backend alone, reported for gfx942 and
# gfx950 alone ("<experiment>|<path>|gfx942,gfx950").
find_package(Python3 COMPONENTS Interpreter)
get_filename_component(_schedlab_scripts "${CMAKE_CURRENT_LIST_DIR}/../scripts" ABSOLUTE)

function(schedlab_kernel_library target)
  cmake_parse_arguments(ARG "SM90A_ONLY;AMD_ONLY" "EXPERIMENT" "SOURCES;LINK" ${ARGN})
  if(NOT ARG_EXPERIMENT)
    set(ARG_EXPERIMENT "kernels")
  endif()
  set(only "")
  set(backend "${SCHEDLAB_GPU_BACKEND}")  # the backend that builds it: any but none
  if(ARG_SM90A_ONLY)
    set(only "|sm_90a")
    set(backend cuda)
  elseif(ARG_AMD_ONLY)
    set(only "|gfx942,gfx950")
    set(backend hip)
  endif()
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE)
    set_property(GLOBAL APPEND PROPERTY SCHEDLAB_KERNEL_SOURCES "${ARG_EXPERIMENT}|${abs}${only}")
  endforeach()
  if(SCHEDLAB_GPU_BACKEND STREQUAL "none" OR NOT SCHEDLAB_GPU_BACKEND STREQUAL backend)
    return()
  endif()
  set_source_files_properties(${ARG_SOURCES} PROPERTIES LANGUAGE ${SCHEDLAB_GPU_LANG})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_link_libraries(${target} PUBLIC schedlab_gpu ${ARG_LINK})
  if(SCHEDLAB_GPU_LANG STREQUAL "CUDA" AND SCHEDLAB_SASS_REPORT AND Python3_Interpreter_FOUND)
    # The compile keeps ptxas's resource lines and its inputs beside the object, so the static
    # report reads the sm_90a rows from the object instead of compiling the source a second
    # time (scripts/nvcc_resource_log.py, scripts/build_objects.py).
    set_target_properties(${target} PROPERTIES CUDA_COMPILER_LAUNCHER
                          "${Python3_EXECUTABLE};${_schedlab_scripts}/nvcc_resource_log.py")
    foreach(src IN LISTS ARG_SOURCES)
      get_filename_component(abs "${src}" ABSOLUTE)
      set_property(GLOBAL APPEND PROPERTY SCHEDLAB_KERNEL_OBJECTS "${abs}|$<TARGET_OBJECTS:${target}>")
    endforeach()
    set_property(GLOBAL APPEND PROPERTY SCHEDLAB_KERNEL_TARGETS ${target})
  endif()
endfunction()

# Sources that hold device code (.cu) compile in the backend's GPU language (CUDA or HIP);
# benchmark and test sources without a kernel are .cpp and compile with the host compiler,
# which takes a fraction of a device compile's time (no device pass over the headers).
#
#   schedlab_device_sources(files... [TARGET_DIRECTORY target])
# TARGET_DIRECTORY: the sources join a target of another folder (set where it is defined).
function(schedlab_device_sources)
  cmake_parse_arguments(ARG "" "TARGET_DIRECTORY" "" ${ARGN})
  set(where)
  if(ARG_TARGET_DIRECTORY)
    set(where TARGET_DIRECTORY ${ARG_TARGET_DIRECTORY})
  endif()
  foreach(src IN LISTS ARG_UNPARSED_ARGUMENTS)
    if(src MATCHES "\\.cu$")
      set_source_files_properties(${src} ${where} PROPERTIES LANGUAGE ${SCHEDLAB_GPU_LANG})
    endif()
  endforeach()
endfunction()

# The command-line test of a benchmark binary (common/tests/bench_binary_cli.sh): help,
# listing and flag errors answered without a GPU, nothing written. Label cpu: it needs none.
function(schedlab_bench_cli_test target)
  if(SCHEDLAB_BUILD_TESTS)
    add_test(NAME ${target}_cli COMMAND bash ${PROJECT_SOURCE_DIR}/common/tests/bench_binary_cli.sh $<TARGET_FILE:${target}>)
    set_tests_properties(${target}_cli PROPERTIES LABELS cpu TIMEOUT 120)
  endif()
endfunction()

# An experiment folder: its kernel instantiations (kernels.cu, registered for the static
# report under the folder's name) and its benchmark binary bench_<name> (bench.cpp).
#
#   schedlab_experiment([LINK libs...] [SM90A_ONLY | AMD_ONLY] [KERNELS file] [BENCH file]
#                       [GPU_TESTS family])
#
# GPU_TESTS: test_gpu.cpp beside it joins that family's GPU test binary (schedlab_gpu_tests).
#
# An experiment with one realization per vendor calls it twice, SM90A_ONLY with the NVIDIA
# sources and AMD_ONLY with the AMD ones (KERNELS, BENCH): one backend builds one of them.
function(schedlab_experiment)
  cmake_parse_arguments(ARG "SM90A_ONLY;AMD_ONLY" "KERNELS;BENCH;GPU_TESTS" "LINK" ${ARGN})
  get_filename_component(name "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  if(NOT ARG_KERNELS)
    set(ARG_KERNELS kernels.cu)
  endif()
  if(NOT ARG_BENCH)
    set(ARG_BENCH bench.cpp)
  endif()
  set(only "")
  set(backend "${SCHEDLAB_GPU_BACKEND}")
  if(ARG_SM90A_ONLY)
    set(only SM90A_ONLY)
    set(backend cuda)
  elseif(ARG_AMD_ONLY)
    set(only AMD_ONLY)
    set(backend hip)
  endif()
  schedlab_kernel_library(${name}_kernels SOURCES ${ARG_KERNELS} EXPERIMENT ${name} LINK ${ARG_LINK} ${only})
  if(NOT SCHEDLAB_GPU_BACKEND STREQUAL "none" AND SCHEDLAB_GPU_BACKEND STREQUAL backend)
    add_executable(bench_${name} ${ARG_BENCH})
    target_link_libraries(bench_${name} PRIVATE ${name}_kernels)
    schedlab_bench_cli_test(bench_${name})
  endif()
  # GPU_TESTS <family>: the experiment's GPU tests (test_gpu.cpp beside it) join that family's
  # test binary (kernels/CMakeLists.txt), with the experiment's kernels.
  if(ARG_GPU_TESTS AND NOT SCHEDLAB_GPU_BACKEND STREQUAL "none" AND SCHEDLAB_GPU_BACKEND STREQUAL backend)
    schedlab_gpu_tests(${ARG_GPU_TESTS} SOURCES test_gpu.cpp LINK ${name}_kernels)
  endif()
endfunction()

# GPU test sources of the current folder joining a family's test binary
# (schedlab_gpu_tests_<family>, kernels/CMakeLists.txt), with the libraries they need; nothing
# where the binary is not built (no GPU backend, or a family the backend does not build).
#
#   schedlab_gpu_tests(<family> SOURCES files... [LINK libs...])
function(schedlab_gpu_tests family)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK" ${ARGN})
  set(tests_target schedlab_gpu_tests_${family})
  if(NOT TARGET ${tests_target})
    return()
  endif()
  schedlab_device_sources(${ARG_SOURCES} TARGET_DIRECTORY ${tests_target})
  foreach(src IN LISTS ARG_SOURCES)
    target_sources(${tests_target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${src})
  endforeach()
  if(ARG_LINK)
    target_link_libraries(${tests_target} PRIVATE ${ARG_LINK})
  endif()
endfunction()
