# Kernel sources are registered once, with the experiment they belong to, so that the
# GPU build, the AMD ISA check and the static resource report all see the same list.
#
#   schedlab_kernel_library(<target> SOURCES a.cu b.cu [EXPERIMENT name] [LINK libs...])
#
# With a GPU backend it builds a static library from the sources (in the backend's
# language); in every configuration it records each source in the global property
# SCHEDLAB_KERNEL_SOURCES as "<experiment>|<absolute path>" for the static report.
function(schedlab_kernel_library target)
  cmake_parse_arguments(ARG "" "EXPERIMENT" "SOURCES;LINK" ${ARGN})
  if(NOT ARG_EXPERIMENT)
    set(ARG_EXPERIMENT "kernels")
  endif()
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE)
    set_property(GLOBAL APPEND PROPERTY SCHEDLAB_KERNEL_SOURCES "${ARG_EXPERIMENT}|${abs}")
  endforeach()
  if(SCHEDLAB_GPU_BACKEND STREQUAL "none")
    return()
  endif()
  set_source_files_properties(${ARG_SOURCES} PROPERTIES LANGUAGE ${SCHEDLAB_GPU_LANG})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_link_libraries(${target} PUBLIC schedlab_gpu ${ARG_LINK})
endfunction()

# An experiment folder: its kernel instantiations (kernels.cu, registered for the static
# report under the folder's name) and its benchmark binary bench_<name> (bench.cu).
#
#   schedlab_experiment([LINK libs...])   # in experiments/<name>/CMakeLists.txt
function(schedlab_experiment)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  get_filename_component(name "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  schedlab_kernel_library(${name}_kernels SOURCES kernels.cu EXPERIMENT ${name} LINK ${ARG_LINK})
  if(NOT SCHEDLAB_GPU_BACKEND STREQUAL "none")
    set_source_files_properties(bench.cu PROPERTIES LANGUAGE ${SCHEDLAB_GPU_LANG})
    add_executable(bench_${name} bench.cu)
    target_link_libraries(bench_${name} PRIVATE ${name}_kernels)
  endif()
endfunction()
