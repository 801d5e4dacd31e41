#!/usr/bin/env bash
# A real OpenTelemetry trace collector for the OTLP test of the `otel` feature: Arize Phoenix
# from PyPI (pinned), which receives OTLP over HTTP (`/v1/traces`), stores the spans in its
# own SQLite database and serves them back over its REST API. On 127.0.0.1, on a free port.
#
#   .ci/phoenix.sh start   install Phoenix into a virtual environment under $HOME when missing
#                          (HPD_PHOENIX_CACHE overrides it), start it with a fresh working
#                          folder and print its base URL (the test reads it as HPD_OTLP_URL)
#   .ci/phoenix.sh stop    stop it and remove its working folder
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PHOENIX_VERSION=20.26.1

cache="${HPD_PHOENIX_CACHE:-$HOME/.cache/hpd-phoenix}"
venv="$cache/venv-$PHOENIX_VERSION"
state_dir="$(ci_state_dir)"
state="$state_dir/phoenix.env"
log() { echo "phoenix: $*" >&2; }

stop_server() {
    [ -f "$state" ] || return 0
    # shellcheck disable=SC1090
    source "$state"
    kill "$PID" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$PID" 2>/dev/null || true
    rm -rf "$WORKING_DIR"
    rm -f "$state"
}

case "${1:-}" in
    start)
        if [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("arize-phoenix"))' 2>/dev/null || true)" != "$PHOENIX_VERSION" ]; then
            log "installing arize-phoenix==$PHOENIX_VERSION into $venv"
            python3 -m venv "$venv" >&2 || {
                log "python3 -m venv failed; installing python3-venv from Debian"
                ci_apt_install python3-venv >&2
                python3 -m venv "$venv" >&2
            }
            "$venv/bin/pip" install --quiet "arize-phoenix==$PHOENIX_VERSION" >&2
        fi
        stop_server
        mkdir -p "$state_dir"
        port="$(ci_free_port)"
        grpc_port="$(ci_free_port)"
        working_dir="$(mktemp -d "$state_dir/phoenix-XXXXXX")"
        server_log="$state_dir/phoenix.log"
        PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$port" PHOENIX_GRPC_PORT="$grpc_port" \
            PHOENIX_WORKING_DIR="$working_dir" PHOENIX_TELEMETRY_ENABLED=false \
            "$venv/bin/python" -c 'import sys; from phoenix.server.main import main; sys.exit(main())' \
            serve > "$server_log" 2>&1 &
        printf 'PID=%s\nPORT=%s\nWORKING_DIR=%s\n' "$!" "$port" "$working_dir" > "$state"
        url="http://127.0.0.1:$port"
        # Its first start creates the database: allow a minute.
        for _ in $(seq 1 600); do
            if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
                "$url/healthz" 2>/dev/null; then
                printf '%s\n' "$url"
                exit 0
            fi
            sleep 0.1
        done
        log "Phoenix did not start:"; tail -40 "$server_log" >&2
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
