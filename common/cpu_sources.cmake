# CPU sources of schedlab_core (dtypes, problems, data, references, accuracy gate, the
# benchmark axes parser): plain C++ with no GPU toolchain, so they build and test in every
# backend configuration.
set(SCHEDLAB_CORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/dtype.cpp
  ${CMAKE_CURRENT_LIST_DIR}/problem.cpp
  ${CMAKE_CURRENT_LIST_DIR}/data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/replay_seed.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reference/attention_ref.cpp
  ${CMAKE_CURRENT_LIST_DIR}/harness/accuracy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/harness/axes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/harness/timeline.cpp
)
