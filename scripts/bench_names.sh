# Sourced by the device scripts. A benchmark name as a --benchmark_filter regex that matches it
# alone: the ragged batches' names hold '+' (lengths:31x1024+1x51200), which a filter would
# read as a quantifier, so every regex metacharacter is escaped.
literal_regex() { printf '%s' "$1" | sed 's/[][\\.*^$+?(){}|]/\\&/g'; }
