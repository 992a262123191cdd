#!/usr/bin/env bash
# A built benchmark binary answers its command line sensibly, with or without a GPU: --help
# and --benchmark_list_tests exit 0, bad --schedlab_* values exit 2 with a message naming the
# flag, a run exits 3 without a GPU (4 with one: the filter matches nothing), and none of
# them leaves anything in the working directory (the default results tree is ./results).
set -uo pipefail
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failed=0

# expect CODES PATTERN ARGS...: exit status one of CODES (a|b), output matching PATTERN.
expect() {
  local codes=$1 pattern=$2 out rc
  shift 2
  out=$("$bin" "$@" 2>&1)
  rc=$?
  if [[ ! "|$codes|" == *"|$rc|"* ]]; then
    echo "FAIL: $(basename "$bin") $*: exit $rc, expected $codes"; echo "$out" | tail -5; failed=1
  elif ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: $(basename "$bin") $*: output lacks /$pattern/"; echo "$out" | tail -5; failed=1
  fi
  if [[ -n "$(ls -A "$work")" ]]; then
    echo "FAIL: $(basename "$bin") $*: left $(ls -A "$work")"; failed=1
    rm -rf "${work:?}"/* "${work:?}"/.[!.]*
  fi
}

expect 0 'schedlab_profile_launches=N' --help
expect 0 'benchmark_filter' --help
expect 0 '/' --benchmark_list_tests
expect 2 "schedlab_profile_launches=N: 'abc' is not a whole number" --schedlab_profile_launches=abc
expect 2 'schedlab_tier=quick\|default\|full' --schedlab_tier=fast
expect 2 'unknown flag --schedlab_bogus' --schedlab_bogus=1
expect 2 'schedlab_results_root=DIR: an empty value' --schedlab_results_root=
expect 2 'schedlab_axes' --schedlab_axes=no_such_axis=1
expect 2 'unrecognized command-line flag' --benchmark_no_such_flag
expect '3|4' 'no GPU found|no benchmark matched' '--benchmark_filter=^no benchmark has this name$'
exit $failed
