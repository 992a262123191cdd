# Kernel sources are registered once, with the experiment they belong to, so that the
# GPU build, the AMD ISA check and the static resource report all see the same list.
#
#   schedlab_kernel_library(<target> SOURCES a.cu b.cu [EXPERIMENT name] [LINK libs...] [SM90A_ONLY])
#
# With a GPU backend it builds a static library from the sources (in the backend's
# language); in every configuration it records each source in the global property
# SCHEDLAB_KERNEL_SOURCES as "<experiment>|<absolute path>" for the static report.
# SM90A_ONLY: Hopper-only kernels (wgmma, setmaxnreg): built with the cuda backend alone and
# reported for sm_90a alone ("<experiment>|<path>|sm_90a").
function(schedlab_kernel_library target)
  cmake_parse_arguments(ARG "SM90A_ONLY" "EXPERIMENT" "SOURCES;LINK" ${ARGN})
  if(NOT ARG_EXPERIMENT)
    set(ARG_EXPERIMENT "kernels")
  endif()
  set(only "")
  if(ARG_SM90A_ONLY)
    set(only "|sm_90a")
  endif()
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE)
    set_property(GLOBAL APPEND PROPERTY SCHEDLAB_KERNEL_SOURCES "${ARG_EXPERIMENT}|${abs}${only}")
  endforeach()
  if(SCHEDLAB_GPU_BACKEND STREQUAL "none" OR (ARG_SM90A_ONLY AND NOT SCHEDLAB_GPU_BACKEND STREQUAL "cuda"))
    return()
  endif()
  set_source_files_properties(${ARG_SOURCES} PROPERTIES LANGUAGE ${SCHEDLAB_GPU_LANG})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_link_libraries(${target} PUBLIC schedlab_gpu ${ARG_LINK})
endfunction()

# An experiment folder: its kernel instantiations (kernels.cu, registered for the static
# report under the folder's name) and its benchmark binary bench_<name> (bench.cu).
#
#   schedlab_experiment([LINK libs...] [SM90A_ONLY])   # in experiments/<name>/CMakeLists.txt
function(schedlab_experiment)
  cmake_parse_arguments(ARG "SM90A_ONLY" "" "LINK" ${ARGN})
  get_filename_component(name "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  set(only "")
  if(ARG_SM90A_ONLY)
    set(only SM90A_ONLY)
  endif()
  schedlab_kernel_library(${name}_kernels SOURCES kernels.cu EXPERIMENT ${name} LINK ${ARG_LINK} ${only})
  if(NOT SCHEDLAB_GPU_BACKEND STREQUAL "none" AND (NOT ARG_SM90A_ONLY OR SCHEDLAB_GPU_BACKEND STREQUAL "cuda"))
    set_source_files_properties(bench.cu PROPERTIES LANGUAGE ${SCHEDLAB_GPU_LANG})
    add_executable(bench_${name} bench.cu)
    target_link_libraries(bench_${name} PRIVATE ${name}_kernels)
  endif()
endfunction()
