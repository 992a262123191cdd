#!/usr/bin/env bash
# Packs what scripts/device_full.sh runs on the device machine into .carry (ignored by git,
# named in the device call's carry): the built binaries stripped and xz-compressed
# (.carry/bin.tar.xz: benchmarks and GPU tests, plus any extra paths given), Google
# Benchmark's shared library (.carry/lib), and the commit they were built from
# (.carry/provenance). Refuses a dirty checkout: results must name a clean commit. With
# OLDER_BUILD set, also the benchmarks of that build directory (.carry/old.tar.xz).
# Usage: [ONLY='bench_x schedlab_gpu_tests_y'] bash scripts/pack_carry.sh [BUILD_DIR] [extra binaries...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/cuda}
shift || true
if [ -n "$(git status --porcelain)" ]; then
  echo "pack_carry: the checkout has uncommitted changes; commit first (results must name a clean commit)" >&2
  exit 1
fi
# The binaries record the commit they were built from (generated/provenance_build.cpp), and every
# results file of the call names it: a build of another commit, or of a dirty tree, would make
# the call's files say so. Refuse it before anything is packed.
prov="$build/generated/provenance_build.cpp"
if [ -f "$prov" ]; then
  read -r built_commit built_dirty < <(sed -n 's/.*BuildInfo info{"\([0-9a-f]*\)", "\([a-z]*\)".*/\1 \2/p' "$prov")
  if [ "${built_commit:-}" != "$(git rev-parse HEAD)" ] || [ "${built_dirty:-}" != false ]; then
    echo "pack_carry: $build was built from ${built_commit:-an unknown commit} (dirty: ${built_dirty:-?}), not from" \
      "HEAD $(git rev-parse --short HEAD) clean: build again from this commit" >&2
    exit 1
  fi
fi
rm -rf .carry/bin .carry/bin.tar.xz
mkdir -p .carry/bin .carry/lib
# ONLY (a space-separated list of binary names) packs just those of the build, for a call that
# runs one family and would not fit the carry limit with every binary built.
for b in "$build"/kernels/schedlab_gpu_tests_* "$build"/kernels/bench_naive "$build"/experiments/*/bench_* "$@"; do
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $(basename "$b") "* ]]; then continue; fi
  if [ -x "$b" ] && [ -f "$b" ]; then strip -o ".carry/bin/$(basename "$b")" "$b"; fi
done
cp -P /usr/lib/x86_64-linux-gnu/libbenchmark.so* .carry/lib/
echo "$(git rev-parse HEAD) false" >.carry/provenance
tar -C .carry -cJf .carry/bin.tar.xz bin
rm -rf .carry/bin .carry/old .carry/old.tar.xz
# OLDER_BUILD=<build dir of another commit>: its benchmarks too (.carry/old.tar.xz), timed by
# scripts/device_full.sh before and after the sweep, to compare two builds in one device call.
if [ -n "${OLDER_BUILD:-}" ]; then
  mkdir -p .carry/old
  for b in "$OLDER_BUILD"/kernels/bench_hopper_prefill_tuning "$OLDER_BUILD"/kernels/bench_prefill_tuning \
           "$OLDER_BUILD"/experiments/*/bench_*; do
    if [ -x "$b" ] && [ -f "$b" ]; then strip -o ".carry/old/$(basename "$b")" "$b"; fi
  done
  tar -C .carry -cJf .carry/old.tar.xz old
  rm -rf .carry/old
fi
du -sh .carry
