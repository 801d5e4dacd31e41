#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance) against
# hpd-agent's MCP server (`McpServer::serve_http`) and client (`McpHarness`), through the two
# binaries of hpd-agent-tests, `mcp_conformance_server` and `mcp_conformance_client`.
#
#   bash .ci/mcp-conformance.sh            # every revision below, server and client
#
# Installs, idempotently, into a cache under $HOME (override with HPD_CONFORMANCE_CACHE):
# Node.js 22 from npm's `node@22` package (the suite needs 22) and both suite lines, pinned.
# What runs, per protocol revision:
#   - 2025-11-25 and 2026-07-28: the revision's own requirement set of the 0.2 line
#     (`--requirements <revision>`, server and client): exactly the scenarios the revision
#     requires, frozen at its release. The suite also runs the scenarios the set lists as not
#     scored (extensions, pending ones, ones added after the release); they are printed, but
#     neither they nor their failures count (the suite's baseline check leaves them out too).
#   - 2025-06-18: the 0.1 line, which has no requirement sets (`--requirements` exists only
#     from 0.2, whose sets are 2025-11-25 and 2026-07-28). Its closest equivalent runs: the
#     scenarios of that revision (`--spec-version 2025-06-18`), the server's active suite
#     (pending scenarios left out, as the requirement sets do) and every client scenario.
# Each revision has a baseline of expected failures in
# .ci/mcp-conformance/expected-failures-<revision>.yaml, one entry per scenario of a capability
# the project deliberately does not offer, each with a one-line reason as a comment. The
# suite's own `--expected-failures` check (it works with `--requirements`, over the scored
# scenarios) fails the run on an unexpected failure and on a stale entry (a listed scenario
# that passes); this script exits non-zero then. It prints the scenarios passed per revision at
# the end (HPD_CONFORMANCE_SUMMARY names a file to append that summary to).
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
out_dir="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$out_dir"
}
trap cleanup EXIT

log "building the conformance server and client"
cargo build --quiet -p hpd-agent-tests --bin mcp_conformance_server --bin mcp_conformance_client >&2
bin_dir="$(cargo metadata --format-version 1 --no-deps | node -e \
  'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')/debug"
# Copied at once: a build of another checkout that shares the target directory (its binaries
# have the same paths) must not swap the programs under test during the run.
cp "$bin_dir/mcp_conformance_server" "$bin_dir/mcp_conformance_client" "$out_dir/"
server_bin="$out_dir/mcp_conformance_server"
client_bin="$out_dir/mcp_conformance_client"

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
summary_lines() { grep -E "^[✓✗] [^ ]+: [0-9]+ passed" "$1" || true; }
# The scenarios of one leg (`server` or `client`) a requirement set scores, one a line.
required() { # suite revision leg
  local heading
  case "$3" in server) heading='Server scenarios' ;; client) heading='Client scenarios' ;; esac
  "$1" list --requirements "$2" | awk -v h="$heading" '
    index($0, h) == 1 { on = 1; next }
    on && /^[[:space:]]*$/ { exit }
    on && /^  - / { print $2 }'
}
# "passed/total" of the summary lines in $1 whose scenario is (or, with `not`, is not) listed
# in the file $2; without $2, of every summary line.
tally() { # log [list [not]]
  local lines
  lines="$(summary_lines "$1")"
  if [ -n "${2:-}" ]; then
    lines="$(printf '%s\n' "$lines" | awk -v list="$2" -v not="${3:-}" '
      BEGIN { while ((getline name < list) > 0) wanted[name] = 1 }
      NF { name = $2; sub(/:$/, "", name); if ((name in wanted) != (not == "not")) print }')"
  fi
  local passed total
  passed=$(printf '%s\n' "$lines" | grep -c '^✓' || true)
  total=$(printf '%s\n' "$lines" | grep -c '^[✓✗]' || true)
  echo "$passed/$total"
}

# "passed/total" of the summary lines in $1 of the tasks extension's scenarios (`tasks-*`).
tasks_tally() { # log
  local lines passed total
  lines="$(summary_lines "$1" | grep -E '^[✓✗] tasks-' || true)"
  passed=$(printf '%s\n' "$lines" | grep -c '^✓' || true)
  total=$(printf '%s\n' "$lines" | grep -c '^[✓✗]' || true)
  echo "$passed/$total"
}

failed=0
summary=""
# Runs one leg against the program under test; `$@` are the suite's options that choose the
# scenarios.
leg() { # suite-version revision leg baseline log options...
  local version="$1" revision="$2" which="$3" baseline="$4" log_file="$5" status=0
  local suite="$cache/suite-$version/node_modules/.bin/conformance"
  shift 5
  log "== conformance $version, $revision: $which"
  if [ "$which" = server ]; then
    start_server
    "$suite" server --url "$server_url" "$@" \
      --expected-failures "$baseline" -o "$out_dir/results" 2>&1 | tee "$log_file" || status=$?
    stop_server
  else
    "$suite" client --command "$client_bin" "$@" \
      --expected-failures "$baseline" -o "$out_dir/results" 2>&1 | tee "$log_file" || status=$?
  fi
  [ "$status" -eq 0 ] || { log "$which scenarios of $revision: unexpected result (exit $status)"; failed=1; }
}

# A revision's requirement set, server and client (the 0.2 line).
requirements() { # suite-version revision
  local suite="$cache/suite-$1/node_modules/.bin/conformance" revision="$2" which
  local baseline=".ci/mcp-conformance/expected-failures-$revision.yaml" counts="" sep=":"
  for which in server client; do
    local log_file="$out_dir/$which-$revision.txt" list="$out_dir/$which-$revision.required"
    required "$suite" "$revision" "$which" > "$list"
    [ -s "$list" ] || { log "the suite $1 lists no $which scenarios for $revision"; exit 1; }
    leg "$1" "$revision" "$which" "$baseline" "$log_file" --requirements "$revision"
    counts+="$sep $which $(tally "$log_file" "$list") required scenarios passed"
    counts+=" (not scored: $(tally "$log_file" "$list" not)"
    # The tasks extension's scenarios are among the not scored ones; their count apart.
    if [ "$which" = server ] && [ "$(tasks_tally "$log_file")" != "0/0" ]; then
      counts+="; of them the tasks extension: $(tasks_tally "$log_file")"
    fi
    counts+=")"
    sep=","
  done
  summary+="$revision (suite $1, --requirements $revision)${counts}"$'\n'
}

# A revision the 0.1 line runs by its scenarios' spec version (no requirement set there).
by_spec_version() { # suite-version revision
  local revision="$2" baseline=".ci/mcp-conformance/expected-failures-$2.yaml"
  leg "$1" "$revision" server "$baseline" "$out_dir/server-$revision.txt" --spec-version "$revision"
  leg "$1" "$revision" client "$baseline" "$out_dir/client-$revision.txt" --suite all --spec-version "$revision"
  summary+="$revision (suite $1, --spec-version $revision):"
  summary+=" server $(tally "$out_dir/server-$revision.txt") scenarios passed,"
  summary+=" client $(tally "$out_dir/client-$revision.txt")"$'\n'
}

by_spec_version "$SUITE_01" 2025-06-18
requirements "$SUITE_02" 2025-11-25
requirements "$SUITE_02" 2026-07-28

echo "== MCP conformance summary"
printf '%s' "$summary"
[ -n "${HPD_CONFORMANCE_SUMMARY:-}" ] && printf '%s' "$summary" >> "$HPD_CONFORMANCE_SUMMARY"
if [ "$failed" -ne 0 ]; then
  log "the conformance suite found unexpected failures or stale baseline entries (see above)"
  exit 1
fi
