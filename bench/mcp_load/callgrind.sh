#!/usr/bin/env bash
# Instructions per served `tools/call`, counted by Callgrind on the server process.
#
#     cd bench/mcp_load && cargo build --release
#     ./callgrind.sh hpd              # hpd-agent's McpServer, 2025-11-25 sessions
#     ./callgrind.sh rmcp stateless   # the bare rmcp server, 2026-07-28 stateless
#
# The server runs under `valgrind --tool=callgrind`; 16 clients warm it up for 1 s, the counts
# are zeroed, then a 2 s load and an 8 s load are each dumped. The cost of one call is the
# difference of the two dumps' totals divided by the difference of their calls, so the start-up
# and the clients' set-up drop out. The profile of the 8 s load is kept (its path is printed)
# for `callgrind_annotate --inclusive=yes FILE`.
set -euo pipefail

which=${1:?usage: callgrind.sh hpd|rmcp [stateless]}
mode=${2:-}
bin=${MCP_LOAD_BIN:-target/release/mcp-load}
out_dir=${CALLGRIND_OUT:-$(mktemp -d)}
for tool in valgrind callgrind_control callgrind_annotate; do
  command -v "$tool" >/dev/null || { echo "callgrind.sh: $tool is not installed" >&2; exit 1; }
done
[ -x "$bin" ] || { echo "callgrind.sh: build first (cargo build --release): no $bin" >&2; exit 1; }

url_file="$out_dir/url"
valgrind --tool=callgrind --callgrind-out-file="$out_dir/cg.%p.out" \
  "$bin" serve "$which" > "$url_file" 2> "$out_dir/valgrind.log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 120); do
  url=$(head -n1 "$url_file" 2>/dev/null || true)
  [ -n "$url" ] && break
  sleep 1
done
[ -n "$url" ] || { echo "callgrind.sh: the server did not start" >&2; cat "$out_dir/valgrind.log" >&2; exit 1; }

# `load` prints "... N calls ..."; the number of calls of one load.
calls() { "$bin" load "$url" 16 "$1" $mode | sed -E 's/.*: ([0-9]+) calls.*/\1/'; }
# The instructions of the newest dump.
dumped() {
  callgrind_control -d "$server" >/dev/null 2>&1
  sleep 1
  local file
  file=$(ls -t "$out_dir"/cg.*.out.* | head -n1)
  callgrind_annotate "$file" 2>/dev/null | grep -m1 "PROGRAM TOTALS" | sed -E 's/^ *([0-9,]+).*/\1/' | tr -d ,
}

calls 1 >/dev/null
callgrind_control -z "$server" >/dev/null 2>&1
short_calls=$(calls 2)
short=$(dumped)
long_calls=$(calls 8)
long=$(dumped)
echo "$which ${mode:-sessions}: $short_calls / $long_calls calls, $short / $long instructions," \
  "$(( (long - short) / (long_calls - short_calls) )) per call"
echo "profile of the 8 s load: $(ls -t "$out_dir"/cg.*.out.* | head -n1)"
