#!/usr/bin/env bash
# Times `cargo build` (dev profile) of the two generated crates in one run: dependencies are
# built first and not timed, then each crate is rebuilt from a touched source, twice,
# alternating. Run gen.py first.
set -euo pipefail
# Without incremental compilation: a touched file would otherwise reuse nearly everything.
export CARGO_INCREMENTAL=0
cd "$(dirname "$0")/generated"
cargo build -q -p hpd-tools -p rmcp-tools
for round in 1 2; do
  for crate in hpd-tools rmcp-tools; do
    touch "$crate/src/lib.rs"
    start=$(date +%s.%N)
    cargo build -q -p "$crate"
    end=$(date +%s.%N)
    printf '%s round %s: %.1f s\n' "$crate" "$round" "$(echo "$end - $start" | bc)"
  done
done
