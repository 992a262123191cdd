#!/usr/bin/env bash
# The main job. With a GPU: build, run every experiment (results under results/<device>/),
# collect stalls, regenerate the plots. With none: build, write the static resource report,
# and regenerate the plots and the published-results report from the committed results.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/common.sh
build
cmake --build "build/$SCHEDLAB_PRESET" --target static_report
if have_gpu && [ "$SCHEDLAB_PRESET" = cuda ]; then
  bash scripts/run_experiments.sh "build/$SCHEDLAB_PRESET" results
else
  echo "main: no GPU found on this machine: no experiment runs; plots come from the committed results"
fi
python3 -m schedlab_analysis.plot_all results --out analysis/out
python3 -m schedlab_analysis.published results
