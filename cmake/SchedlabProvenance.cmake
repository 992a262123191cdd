# Provenance baked into every binary at build time (commit, dirty flag, flags), so a
# results file says what produced it even when the run happens on another machine.
set(SCHEDLAB_PROVENANCE_CPP "${CMAKE_BINARY_DIR}/generated/provenance_build.cpp")
add_custom_target(schedlab_provenance_gen ALL
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUT=${SCHEDLAB_PROVENANCE_CPP}
          -DBACKEND=${SCHEDLAB_GPU_BACKEND}
          "-DARCHS=${CMAKE_CUDA_ARCHITECTURES}${CMAKE_HIP_ARCHITECTURES}"
          "-DFLAGS=${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_RELEASE} ; gpu: ${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_RELEASE}${CMAKE_HIP_FLAGS} ${CMAKE_HIP_FLAGS_RELEASE} -lineinfo --expt-relaxed-constexpr; architectures ${CMAKE_CUDA_ARCHITECTURES}${CMAKE_HIP_ARCHITECTURES}"
          "-DCOMPILER=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}; gpu ${CMAKE_CUDA_COMPILER_ID}${CMAKE_HIP_COMPILER_ID} ${CMAKE_CUDA_COMPILER_VERSION}${CMAKE_HIP_COMPILER_VERSION}"
          -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
          -P ${CMAKE_CURRENT_LIST_DIR}/write_provenance.cmake
  BYPRODUCTS ${SCHEDLAB_PROVENANCE_CPP}
  COMMENT "Recording commit and build flags"
  VERBATIM)
