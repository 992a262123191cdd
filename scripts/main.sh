#!/usr/bin/env bash
# The main job. With a GPU: build, sweep every experiment and the SDPA peers over every visible
# GPU (results under results/<device>/, a sweep summary under results/<device>/sweeps/), then
# regenerate the plots. With none: build, write the static resource report, and regenerate the
# plots and the published-results report from the committed results.
#   bash scripts/main.sh [--tier quick|default|full]      (default: default)
# Exit status: that of the sweep (1 when a binary or a configuration failed), after the plots.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bash scripts/main.sh [--tier quick|default|full]"
tier=default
while [ $# -gt 0 ]; do
  case $1 in
    --tier) [ $# -ge 2 ] || { echo "main: --tier needs a value; $usage" >&2; exit 2; }; tier=$2; shift 2 ;;
    --tier=*) tier=${1#--tier=}; shift ;;
    -h|--help) echo "$usage"; exit 0 ;;
    *) echo "main: unknown argument '$1'; $usage" >&2; exit 2 ;;
  esac
done
case $tier in
  quick|default|full) ;;
  *) echo "main: unknown tier '$tier'; $usage" >&2; exit 2 ;;
esac
bash scripts/setup.sh
source scripts/common.sh
build
cmake --build "build/$SCHEDLAB_PRESET" --target static_report
sweep_rc=0
if have_gpu && [ "$SCHEDLAB_PRESET" = cuda ]; then
  python3 scripts/sweep.py --build "build/$SCHEDLAB_PRESET" --results results --tier "$tier" || sweep_rc=$?
else
  echo "main: no GPU found on this machine: no experiment runs; plots come from the committed results"
fi
python3 -m schedlab_analysis.plot_all results --out analysis/out
python3 -m schedlab_analysis.published results
exit "$sweep_rc"
