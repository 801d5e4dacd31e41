#!/usr/bin/env bash
# Installs the third-party MCP servers that the MCP tests of hpd-agent run against, and the
# official Python SDK whose client drives hpd-agent's own MCP server in a test.
#
#   eval "$(bash .ci/mcp-servers.sh)"
#
# Everything goes into a cache folder under $HOME (override with HPD_MCP_CACHE), and a second
# run installs nothing that is already there. The script prints `export NAME=VALUE` lines on
# standard output (its progress goes to standard error); the tests read:
#
#   HPD_MCP_EVERYTHING  command line of @modelcontextprotocol/server-everything (stdio)
#   HPD_MCP_FILESYSTEM  command line of @modelcontextprotocol/server-filesystem, without the
#                       allowed directories (a test appends its own)
#   HPD_MCP_MEMORY      command line of @modelcontextprotocol/server-memory (stdio)
#   HPD_MCP_SEQUENTIAL_THINKING  command line of @modelcontextprotocol/server-sequential-thinking
#   HPD_MCP_TIME        command line of mcp-server-time (PyPI)
#   HPD_MCP_GIT         command line of mcp-server-git (PyPI), without `--repository`
#   HPD_MCP_PYTHON      a python interpreter that can `import mcp` (the official Python SDK)
#
# Command lines are split on whitespace by the tests, so the cache path must not contain any.
# A test whose variable is unset prints that it was skipped and why.
set -euo pipefail

EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
MCP_SDK_VERSION=2.3.0
MEMORY_VERSION=2026.8.31
SEQUENTIAL_THINKING_VERSION=2026.8.31
TIME_VERSION=2026.10.19
GIT_VERSION=2026.10.19

cache="${HPD_MCP_CACHE:-$HOME/.cache/hpd-mcp}"
case "$cache" in
  *[[:space:]]*) echo "mcp-servers: the cache path '$cache' contains whitespace" >&2; exit 1 ;;
esac
mkdir -p "$cache"
log() { echo "mcp-servers: $*" >&2; }

# --- npm servers -------------------------------------------------------------------------
if ! command -v npm >/dev/null 2>&1; then
  log "npm is missing; installing nodejs and npm from Debian"
  apt-get update >&2 && apt-get install -y nodejs npm >&2
fi
npm_dir="$cache/npm"
installed_version() {
  local manifest="$npm_dir/node_modules/$1/package.json"
  [ -f "$manifest" ] && node -e 'console.log(require(process.argv[1]).version)' "$manifest" || true
}
if [ "$(installed_version @modelcontextprotocol/server-everything)" != "$EVERYTHING_VERSION" ] \
  || [ "$(installed_version @modelcontextprotocol/server-filesystem)" != "$FILESYSTEM_VERSION" ] \
  || [ "$(installed_version @modelcontextprotocol/server-memory)" != "$MEMORY_VERSION" ] \
  || [ "$(installed_version @modelcontextprotocol/server-sequential-thinking)" != "$SEQUENTIAL_THINKING_VERSION" ]; then
  log "installing the npm servers into $npm_dir"
  npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" \
    "@modelcontextprotocol/server-memory@$MEMORY_VERSION" \
    "@modelcontextprotocol/server-sequential-thinking@$SEQUENTIAL_THINKING_VERSION" >&2
else
  log "npm servers already installed in $npm_dir"
fi
everything="$npm_dir/node_modules/.bin/mcp-server-everything"
filesystem="$npm_dir/node_modules/.bin/mcp-server-filesystem"
memory="$npm_dir/node_modules/.bin/mcp-server-memory"
thinking="$npm_dir/node_modules/.bin/mcp-server-sequential-thinking"
for bin in "$everything" "$filesystem" "$memory" "$thinking"; do
  [ -x "$bin" ] || { log "expected executable $bin after npm install"; exit 1; }
done

# --- Python: the SDK, mcp-server-time and mcp-server-git ---------------------------------------------------
venv="$cache/venv"
python="$venv/bin/python"
if [ ! -x "$python" ]; then
  log "creating a virtual environment in $venv"
  python3 -m venv "$venv" >&2 || {
    log "python3 -m venv failed; installing python3-venv from Debian"
    apt-get update >&2 && apt-get install -y python3-venv >&2
    python3 -m venv "$venv" >&2
  }
fi
have_python_packages() {
  "$python" - "$MCP_SDK_VERSION" "$TIME_VERSION" "$GIT_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
wanted = {"mcp": sys.argv[1], "mcp-server-time": sys.argv[2], "mcp-server-git": sys.argv[3]}
sys.exit(0 if all(version(name) == v for name, v in wanted.items()) else 1)
PY
}
if ! have_python_packages; then
  log "installing mcp $MCP_SDK_VERSION, mcp-server-time $TIME_VERSION and mcp-server-git $GIT_VERSION into $venv"
  "$python" -m pip install --quiet --disable-pip-version-check \
    "mcp==$MCP_SDK_VERSION" "mcp-server-time==$TIME_VERSION" "mcp-server-git==$GIT_VERSION" >&2
else
  log "Python packages already installed in $venv"
fi
time_server="$venv/bin/mcp-server-time"
git_server="$venv/bin/mcp-server-git"
for bin in "$time_server" "$git_server"; do
  [ -x "$bin" ] || { log "expected executable $bin after pip install"; exit 1; }
done
"$python" -c 'import mcp' || { log "$python cannot import mcp"; exit 1; }

echo "export HPD_MCP_EVERYTHING='$everything stdio'"
echo "export HPD_MCP_FILESYSTEM='$filesystem'"
echo "export HPD_MCP_MEMORY='$memory'"
echo "export HPD_MCP_SEQUENTIAL_THINKING='$thinking'"
echo "export HPD_MCP_TIME='$time_server --local-timezone UTC'"
echo "export HPD_MCP_GIT='$git_server'"
echo "export HPD_MCP_PYTHON='$python'"
