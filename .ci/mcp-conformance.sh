#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance) against
# hpd-agent's MCP server (`McpServer::serve_http`) and client (`McpHarness`), through the two
# binaries of hpd-agent-tests, `mcp_conformance_server` and `mcp_conformance_client`.
#
#   bash .ci/mcp-conformance.sh            # every version below, server and client
#
# Installs, idempotently, into a cache under $HOME (override with HPD_CONFORMANCE_CACHE):
# Node.js 22 from npm's `node@22` package (the suite needs 22) and both suite lines, pinned:
#   - the 0.1 line for protocol versions 2025-06-18 and 2025-11-25;
#   - a 0.2 prerelease for 2026-07-28.
# Each line has a baseline of expected failures in .ci/mcp-conformance/expected-failures-*.yaml,
# one entry per scenario the project deliberately does not offer, each with a one-line reason
# as a comment. The suite's own `--expected-failures` check fails the run on an unexpected
# failure and on a stale entry (a listed scenario that passes); this script exits non-zero
# then. It prints the scenarios passed per version at the end (HPD_CONFORMANCE_SUMMARY names
# a file to append that summary to).
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=22.23.3
SUITE_01=0.1.16
SUITE_02=0.2.0-alpha.12

cache="${HPD_CONFORMANCE_CACHE:-$HOME/.cache/hpd-mcp-conformance}"
mkdir -p "$cache"
log() { echo "mcp-conformance: $*" >&2; }

installed_version() { # prefix package
  local manifest="$1/node_modules/$2/package.json"
  [ -f "$manifest" ] && node -e 'console.log(require(process.argv[1]).version)' "$manifest" 2>/dev/null || true
}

# --- Node.js 22 ----------------------------------------------------------------------------
if ! command -v npm >/dev/null 2>&1; then
  log "npm is missing; installing nodejs and npm from Debian"
  apt-get update >&2 && apt-get install -y nodejs npm >&2
fi
node_dir="$cache/node-$NODE_VERSION"
if [ ! -x "$node_dir/node_modules/.bin/node" ] \
  || [ "$("$node_dir/node_modules/.bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
  log "installing node@$NODE_VERSION into $node_dir"
  npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error "node@$NODE_VERSION" >&2
fi
export PATH="$node_dir/node_modules/.bin:$PATH"
[ "$(node --version)" = "v$NODE_VERSION" ] || { log "node $NODE_VERSION is not on PATH"; exit 1; }

# --- the suite, both lines -----------------------------------------------------------------
for version in "$SUITE_01" "$SUITE_02"; do
  prefix="$cache/suite-$version"
  if [ "$(installed_version "$prefix" @modelcontextprotocol/conformance)" != "$version" ]; then
    log "installing @modelcontextprotocol/conformance@$version into $prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/conformance@$version" >&2
  fi
done

# --- the baselines: every entry needs its one-line reason ----------------------------------
for file in .ci/mcp-conformance/expected-failures-*.yaml; do
  if grep -nE '^\s*-\s' "$file" | grep -vE '^[0-9]+:\s*-\s*[^#[:space:]]+\s+#\s*\S' >&2; then
    log "$file: the entries above have no reason (write '- scenario  # why')"
    exit 1
  fi
done

# --- the programs under test ---------------------------------------------------------------
log "building the conformance server and client"
cargo build --quiet -p hpd-agent-tests --bin mcp_conformance_server --bin mcp_conformance_client >&2
bin_dir="$(cargo metadata --format-version 1 --no-deps | node -e \
  'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')/debug"
server_bin="$bin_dir/mcp_conformance_server"
client_bin="$bin_dir/mcp_conformance_client"

out_dir="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$out_dir"
}
trap cleanup EXIT

# Starts the server on a free loopback port and sets $server_url.
starts=0
start_server() {
  starts=$((starts + 1))
  local url_file="$out_dir/server-$starts.url"
  "$server_bin" 127.0.0.1:0 > "$url_file" 2> "$out_dir/server.log" &
  server_pid=$!
  for _ in $(seq 1 100); do
    server_url="$(head -n1 "$url_file" 2>/dev/null || true)"
    [ -n "$server_url" ] && return 0
    sleep 0.1
  done
  log "the conformance server did not start:"; cat "$out_dir/server.log" >&2
  return 1
}
stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# Scenario lines of the suite's summaries: `✓ name: ...` passed, `✗ name: ...` failed.
count() { grep -cE "^$1 [^ ]+: [0-9]+ passed" "$2" || true; }

failed=0
summary=""
run() { # suite-version spec-version baseline
  local suite="$cache/suite-$1/node_modules/.bin/conformance" spec="$2" baseline="$3"
  local server_log="$out_dir/server-$spec.txt" client_log="$out_dir/client-$spec.txt" status
  log "== conformance $1, $spec: server"
  start_server
  status=0
  "$suite" server --url "$server_url" --spec-version "$spec" \
    --expected-failures "$baseline" -o "$out_dir/results" 2>&1 | tee "$server_log" || status=$?
  stop_server
  [ "$status" -eq 0 ] || { log "server scenarios of $spec: unexpected result (exit $status)"; failed=1; }
  log "== conformance $1, $spec: client"
  status=0
  "$suite" client --command "$client_bin" --suite all --spec-version "$spec" \
    --expected-failures "$baseline" -o "$out_dir/results" 2>&1 | tee "$client_log" || status=$?
  [ "$status" -eq 0 ] || { log "client scenarios of $spec: unexpected result (exit $status)"; failed=1; }
  local sp sf cp cf
  sp=$(count '✓' "$server_log"); sf=$(count '✗' "$server_log")
  cp=$(count '✓' "$client_log"); cf=$(count '✗' "$client_log")
  summary+="$spec (suite $1): server $sp/$((sp + sf)) scenarios passed, client $cp/$((cp + cf))"$'\n'
}

run "$SUITE_01" 2025-06-18 .ci/mcp-conformance/expected-failures-0.1.yaml
run "$SUITE_01" 2025-11-25 .ci/mcp-conformance/expected-failures-0.1.yaml
run "$SUITE_02" 2026-07-28 .ci/mcp-conformance/expected-failures-0.2.yaml

echo "== MCP conformance summary"
printf '%s' "$summary"
[ -n "${HPD_CONFORMANCE_SUMMARY:-}" ] && printf '%s' "$summary" >> "$HPD_CONFORMANCE_SUMMARY"
if [ "$failed" -ne 0 ]; then
  log "the conformance suite found unexpected failures or stale baseline entries (see above)"
  exit 1
fi
