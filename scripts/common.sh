# Shared by main.sh and test.sh: pick the build preset this machine can build.
export PATH="$PATH:/usr/local/cuda/bin"
if command -v nvcc >/dev/null 2>&1; then
  SCHEDLAB_PRESET=cuda
else
  SCHEDLAB_PRESET=cpu
fi
export SCHEDLAB_PRESET
export PYTHONPATH="$PWD/analysis:$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}"

have_gpu() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU
}

build() {
  cmake --preset "$SCHEDLAB_PRESET" >/dev/null
  cmake --build "build/$SCHEDLAB_PRESET" -j "$(nproc)"
}
