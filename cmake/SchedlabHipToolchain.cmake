# The HIP toolchain for the `hip` preset, included before enable_language(HIP).
#
# With a ROCm install (6.x, /opt/rocm) nothing here applies: CMake's HIP language finds
# ROCm's clang and its hip-lang package as usual (pass CMAKE_HIP_COMPILER or HIPCXX to
# choose another clang).
#
# Without one, on Debian/Ubuntu, it builds with Debian's packages: clang-22 (clang++-22,
# lld-22, clang-tools-22 for clang-offload-bundler, llvm-22 for llvm-dis / llvm-as), libamdhip64-dev
# and rocm-device-libs (both ROCm 5.2.3 on Debian 12), libhsa-runtime-dev. Five gaps
# between that ROCm and clang-22 are bridged here, each visible in the configure output:
#   1. Debian installs the hip-lang CMake package under /usr/lib/<multiarch>/cmake, where
#      CMake's HIP language does not look (<ROCm root>/lib/cmake/hip-lang), and that package
#      wants ROCm's clang layout (clang_rt.builtins beside the compiler). A small hip-lang
#      package for Debian's files is written to <build>/debian-rocm and used as the root.
#   2. rocm-device-libs 5.2.3 predates gfx942 and gfx950: it has no oclc_isa_version_942.bc
#      or _950.bc. They are one constant each (__oclc_ISA_version = 9402 / 9500), written
#      here into <build>/debian-rocm/amdgcn/bitcode beside links to Debian's libraries.
#   3. clang-22 defaults to code object v6, whose ABI library ships from ROCm 6.3 on; the
#      build asks for v5 (-mcode-object-version=5; Debian has oclc_abi_version_500.bc).
#   4. clang-22 no longer links hip.bc, which defines __atomic_work_item_fence that HIP 5.2's
#      __syncthreads calls; the generated ISA files of 2 carry it.
#   5. clang-22 no longer predefines __AMDGCN_WAVEFRONT_SIZE, which HIP 5.2's headers use for
#      warpSize; gfx942 and gfx950 run wave64, so it is defined as 64.
# Every binary then compiles and links for gfx942 and gfx950. None has run: the Debian HIP
# runtime (5.2.3) does not know those GPUs, and ROCm 6.x users build against their own.

set(_root ${CMAKE_BINARY_DIR}/debian-rocm)
if(CMAKE_HIP_COMPILER_ROCM_ROOT STREQUAL _root)
  # configured here before: redo, so that the flags below are set again
elseif(DEFINED CMAKE_HIP_COMPILER_ROCM_ROOT OR EXISTS /opt/rocm/lib/cmake/hip-lang/hip-lang-config.cmake
       OR DEFINED ENV{ROCM_PATH})
  return()  # a ROCm install: CMake's own route
endif()
set(_debian_hip_lang /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/hip-lang/hip-lang-config.cmake)
set(_debian_bitcode /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/amdgcn/bitcode)
if(NOT CMAKE_LIBRARY_ARCHITECTURE OR NOT EXISTS ${_debian_hip_lang})
  return()  # neither ROCm nor Debian's HIP: enable_language(HIP) says what is missing
endif()
if(NOT EXISTS ${_debian_bitcode}/ockl.bc)
  message(FATAL_ERROR "HIP on Debian: ${_debian_bitcode}/ockl.bc not found; install rocm-device-libs")
endif()
message(STATUS "HIP: no ROCm install; building with Debian's HIP packages (see cmake/SchedlabHipToolchain.cmake)")

if(NOT DEFINED CMAKE_HIP_COMPILER AND "$ENV{HIPCXX}" STREQUAL "")
  find_program(SCHEDLAB_HIP_CLANG NAMES clang++-22 REQUIRED)
  set(CMAKE_HIP_COMPILER ${SCHEDLAB_HIP_CLANG} CACHE FILEPATH "HIP compiler")
endif()
get_filename_component(_hip_clang_real "${CMAKE_HIP_COMPILER}" REALPATH)
get_filename_component(_hip_clang_bin "${_hip_clang_real}" DIRECTORY)
find_program(SCHEDLAB_HIP_LLVM_DIS NAMES llvm-dis HINTS ${_hip_clang_bin} NO_DEFAULT_PATH REQUIRED)
find_program(SCHEDLAB_HIP_LLVM_AS NAMES llvm-as HINTS ${_hip_clang_bin} NO_DEFAULT_PATH REQUIRED)
foreach(_tool lld clang-offload-bundler)
  if(NOT EXISTS ${_hip_clang_bin}/${_tool})
    message(FATAL_ERROR "HIP on Debian: ${_hip_clang_bin}/${_tool} not found (packages lld-22, clang-tools-22)")
  endif()
endforeach()

# 2 and 4: the device-library folder: links to Debian's libraries, and for each requested
# architecture an oclc_isa_version file (clang links exactly one per architecture) holding
# the ISA constant and Debian's hip.bc. Written as text IR: llvm-link would drop hip.bc's
# linkonce_odr definition, which nothing references yet.
set(_bitcode ${_root}/amdgcn/bitcode)
file(MAKE_DIRECTORY ${_bitcode})
file(GLOB _debian_libs ${_debian_bitcode}/*.bc)
foreach(_lib IN LISTS _debian_libs)
  get_filename_component(_name ${_lib} NAME)
  file(CREATE_LINK ${_lib} ${_bitcode}/${_name} SYMBOLIC)
endforeach()
execute_process(COMMAND ${SCHEDLAB_HIP_LLVM_DIS} ${_debian_bitcode}/hip.bc -o -
                OUTPUT_VARIABLE _hip_ir RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "HIP on Debian: reading ${_debian_bitcode}/hip.bc failed:\n${_err}")
endif()
foreach(_arch IN LISTS CMAKE_HIP_ARCHITECTURES)
  # gfx942 -> file 942, ISA version 9.4.2 -> 9402; gfx90a -> 90a, 9010 (the __oclc_ISA_version rule).
  if(NOT _arch MATCHES "^gfx([0-9]+)([0-9a-f])([0-9a-f])$")
    message(FATAL_ERROR "HIP on Debian: cannot read the ISA version of '${_arch}'")
  endif()
  set(_num "${CMAKE_MATCH_1}${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
  math(EXPR _isa "${CMAKE_MATCH_1} * 1000 + 0x${CMAKE_MATCH_2} * 100 + 0x${CMAKE_MATCH_3}")
  set(_ll ${_root}/oclc_isa_version_${_num}.ll)
  file(WRITE ${_ll} "${_hip_ir}\n@__oclc_ISA_version = hidden local_unnamed_addr addrspace(4) constant i32 ${_isa}, align 4\n")
  file(REMOVE ${_bitcode}/oclc_isa_version_${_num}.bc)
  execute_process(COMMAND ${SCHEDLAB_HIP_LLVM_AS} ${_ll} -o ${_bitcode}/oclc_isa_version_${_num}.bc
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "HIP on Debian: assembling ${_ll} failed:\n${_err}")
  endif()
  if(EXISTS ${_debian_bitcode}/oclc_isa_version_${_num}.bc)
    message(STATUS "HIP: ${_arch}: oclc_isa_version_${_num}.bc with hip.bc")
  else()
    message(STATUS "HIP: ${_arch}: oclc_isa_version_${_num}.bc generated (ISA ${_isa}, not in rocm-device-libs) with hip.bc")
  endif()
endforeach()

# 1: the hip-lang package CMake's HIP language loads from <root>/lib/cmake/hip-lang.
find_library(SCHEDLAB_AMDHIP64 amdhip64 REQUIRED)
file(CONFIGURE OUTPUT ${_root}/lib/cmake/hip-lang/hip-lang-config.cmake @ONLY CONTENT [=[
# Generated by cmake/SchedlabHipToolchain.cmake: hip-lang for Debian's HIP packages.
if(NOT TARGET hip-lang::device)
  add_library(hip-lang::amdhip64 SHARED IMPORTED)
  set_target_properties(hip-lang::amdhip64 PROPERTIES
    IMPORTED_LOCATION "@SCHEDLAB_AMDHIP64@"
    INTERFACE_COMPILE_DEFINITIONS "$<$<COMPILE_LANGUAGE:HIP>:__HIP_ROCclr__=1>")
  add_library(hip-lang::host INTERFACE IMPORTED)
  set_target_properties(hip-lang::host PROPERTIES INTERFACE_LINK_LIBRARIES hip-lang::amdhip64)
  add_library(hip-lang::device INTERFACE IMPORTED)
  set_target_properties(hip-lang::device PROPERTIES
    INTERFACE_LINK_LIBRARIES hip-lang::host
    INTERFACE_LINK_OPTIONS "$<$<LINK_LANGUAGE:HIP>:--hip-link>")
endif()
set(_CMAKE_HIP_DEVICE_RUNTIME_TARGET hip-lang::device)
]=])
set(CMAKE_HIP_COMPILER_ROCM_ROOT ${_root} CACHE PATH "ROCm root for CMake's HIP language (Debian's, see debian-rocm)")

# 3 and 5, and the device-library folder of 2 and 4. A plain variable, so that the
# compiler check made by enable_language(HIP) uses them too.
string(APPEND CMAKE_HIP_FLAGS " --rocm-path=/usr --rocm-device-lib-path=${_bitcode}"
       " -mcode-object-version=5 -D__AMDGCN_WAVEFRONT_SIZE=64")
