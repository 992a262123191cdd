# Unit tests of schedlab_core; they need no GPU (label cpu, so the cpu test presets run them).
include(GoogleTest)
add_executable(schedlab_core_tests
  ${CMAKE_CURRENT_LIST_DIR}/test_dtype.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_problem.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_replay_seed.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_reference.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_accuracy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_mfma_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_smem_limits.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_timeline.cpp
)
target_link_libraries(schedlab_core_tests PRIVATE schedlab_core GTest::gtest_main)
gtest_discover_tests(schedlab_core_tests PROPERTIES LABELS cpu)
