# Sourced by the device scripts.

# A benchmark name as a --benchmark_filter regex that matches it
# alone: the ragged batches' names hold '+' (lengths:31x1024+1x51200), which a filter would
# read as a quantifier, so every regex metacharacter is escaped.
literal_regex() { printf '%s' "$1" | sed 's/[][\\.*^$+?(){}|]/\\&/g'; }

# The shape part of a benchmark name EXPERIMENT/VARIANT/DTYPE/SHAPE.../iterations:N as a file
# name part: no ':', '/' or '+' (which the device tool would not bring back), e.g.
# seq:8192/head_dim:128/causal:0 -> seq8192-head_dim128-causal0. The profiling scripts name their
# files with it, since a filter may select several shapes of one variant.
shape_of() {
  local experiment variant dtype shape
  IFS=/ read -r experiment variant dtype _ <<<"$1"
  shape=${1#"$experiment/$variant/$dtype/"}
  shape=${shape%/iterations:*}
  shape=${shape//:/}
  shape=${shape//\//-}
  printf '%s' "${shape//+/_}"
}
