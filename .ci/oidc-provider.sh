#!/usr/bin/env bash
# A real authorization server for the MCP OAuth tests: npm's `oidc-provider`, configured by
# .ci/oidc-provider.mjs (dynamic registration, PKCE, JWT access tokens per resource, refresh
# tokens, one user who consents at once), on 127.0.0.1 on a free port.
#
#   .ci/oidc-provider.sh start   install Node.js 22 and oidc-provider (pinned) into a cache
#                                under $HOME when missing (HPD_OIDC_CACHE overrides it), start
#                                the server and print its issuer URL
#   .ci/oidc-provider.sh stop    stop it
#
# Access tokens live HPD_OIDC_ACCESS_TOKEN_TTL seconds (default 10), so that the tests see a
# refresh and an expired token without waiting long.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ci_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

NODE_VERSION=22.23.3
OIDC_PROVIDER_VERSION=9.13.3

cache="${HPD_OIDC_CACHE:-$HOME/.cache/hpd-oidc}"
state_dir="$(ci_state_dir)"
state="$state_dir/oidc-provider.env"
log() { echo "oidc-provider: $*" >&2; }

stop_server() {
    [ -f "$state" ] || return 0
    # shellcheck disable=SC1090
    source "$state"
    kill "$PID" 2>/dev/null || true
    rm -f "$state"
}

case "${1:-}" in
    start)
        command -v npm >/dev/null 2>&1 || { log "npm is missing; installing nodejs and npm from Debian"; ci_apt_install nodejs npm >&2; }
        node_dir="$cache/node-$NODE_VERSION"
        if [ "$("$node_dir/node_modules/.bin/node" --version 2>/dev/null || true)" != "v$NODE_VERSION" ]; then
            log "installing node@$NODE_VERSION into $node_dir"
            npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error "node@$NODE_VERSION" >&2
        fi
        node="$node_dir/node_modules/.bin/node"
        app="$cache/oidc-provider-$OIDC_PROVIDER_VERSION"
        manifest="$app/node_modules/oidc-provider/package.json"
        if [ "$([ -f "$manifest" ] && "$node" -e 'console.log(require(process.argv[1]).version)' "$manifest" || true)" != "$OIDC_PROVIDER_VERSION" ]; then
            log "installing oidc-provider@$OIDC_PROVIDER_VERSION into $app"
            PATH="$node_dir/node_modules/.bin:$PATH" npm install --prefix "$app" --no-audit --no-fund --loglevel=error \
                "oidc-provider@$OIDC_PROVIDER_VERSION" >&2
        fi
        # ES modules resolve packages next to the script: run a copy that sits in the cache.
        cp "$ci_dir/oidc-provider.mjs" "$app/hpd-oidc-provider.mjs"
        stop_server
        mkdir -p "$state_dir"
        port="$(ci_free_port)"
        server_log="$state_dir/oidc-provider.log"
        "$node" "$app/hpd-oidc-provider.mjs" "$port" > "$server_log" 2>&1 &
        printf 'PID=%s\nPORT=%s\n' "$!" "$port" > "$state"
        for _ in $(seq 1 100); do
            if grep -q ' ready$' "$server_log" 2>/dev/null; then
                printf 'http://127.0.0.1:%s\n' "$port"
                exit 0
            fi
            sleep 0.1
        done
        log "the server did not start:"; cat "$server_log" >&2
        stop_server
        exit 1
        ;;
    stop)
        stop_server
        ;;
    *)
        echo "usage: $0 start|stop" >&2
        exit 2
        ;;
esac
