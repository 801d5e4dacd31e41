#!/usr/bin/env bash
# A throwaway Redis server for the session-store tests.
#
#   .ci/redis.sh start    install Redis from Debian's packages when missing and start a server
#                         on 127.0.0.1 on a free port, with a password and its data in a
#                         temporary folder (a second start after stop restarts it with the same
#                         port and data); prints the connection URL
#   .ci/redis.sh stop     stop the server (it writes its append-only file first), keep its data
#   .ci/redis.sh url      print the connection URL
#   .ci/redis.sh destroy  stop the server and delete its data
#   .ci/redis.sh pid      print the server's process id
#   .ci/redis.sh pause    stop the server with SIGSTOP: it hangs, connections stay open and
#                         unanswered (for the timeout tests)
#   .ci/redis.sh resume   SIGCONT: it answers again
#
# With HPD_CI_TLS=1 every command acts on a second, TLS-only server (its own state, data and
# port; no plain port), with a certificate for `localhost` signed by the throwaway CA of
# .ci/tls-certs.sh; `url` prints rediss://:PASSWORD@localhost:PORT/0?sslrootcert=CA_FILE.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/lib.sh"

state_dir="$(ci_state_dir)"
tls="${HPD_CI_TLS:-}"
state="$state_dir/redis${tls:+-tls}.env"
certs="$state_dir/certs"

url() {
    # shellcheck disable=SC1090
    source "$state"
    if [ -n "$tls" ]; then
        printf 'rediss://:%s@localhost:%s/0?sslrootcert=%s\n' "$PASSWORD" "$PORT" "$certs/ca.pem"
    else
        printf 'redis://:%s@127.0.0.1:%s/0\n' "$PASSWORD" "$PORT"
    fi
}

running() {
    # shellcheck disable=SC1090
    source "$state"
    [ -f "$DATA/redis.pid" ] && kill -0 "$(cat "$DATA/redis.pid")" 2>/dev/null
}

stop_server() {
    # shellcheck disable=SC1090
    source "$state"
    if running; then
        local pid i
        pid="$(cat "$DATA/redis.pid")"
        kill -TERM "$pid"
        for i in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
}

case "${1:-}" in
    pid|pause|resume)
        [ -f "$state" ] || { echo "no Redis server was started; run: $0 start" >&2; exit 1; }
        running || { echo "Redis is not running" >&2; exit 1; }
        pid="$(cat "$DATA/redis.pid")"
        case "$1" in
            pid) printf '%s\n' "$pid" ;;
            pause) kill -STOP "$pid" ;;
            resume) kill -CONT "$pid" ;;
        esac
        ;;
    start)
        command -v redis-server >/dev/null || ci_apt_install redis-server
        if [ ! -f "$state" ] || [ ! -d "$(source "$state"; printf '%s' "$DATA")" ]; then
            mkdir -p "$state_dir"
            data="$(mktemp -d "$state_dir/redis.XXXXXX")"
            printf 'DATA=%s\nPORT=%s\nPASSWORD=%s\n' "$data" "$(ci_free_port)" "$(ci_password)" > "$state"
        fi
        # shellcheck disable=SC1090
        source "$state"
        if ! running; then
            # The password goes in a config file, not on the command line.
            printf 'requirepass %s\n' "$PASSWORD" > "$DATA/redis.conf"
            chmod 600 "$DATA/redis.conf"
            ports=(--port "$PORT")
            if [ -n "$tls" ]; then
                bash "$here/tls-certs.sh" "$certs" >/dev/null
                ports=(--port 0 --tls-port "$PORT" --tls-cert-file "$certs/server.pem"
                       --tls-key-file "$certs/server.key" --tls-ca-cert-file "$certs/ca.pem"
                       --tls-auth-clients no)
            fi
            redis-server "$DATA/redis.conf" --bind 127.0.0.1 "${ports[@]}" --dir "$DATA" \
                --daemonize yes --pidfile "$DATA/redis.pid" --logfile "$DATA/redis.log" \
                --save "" --appendonly yes --appendfsync everysec >&2
            ci_wait_port "$PORT" 30 || { echo "Redis did not open port $PORT" >&2; exit 1; }
        fi
        url
        ;;
    stop)
        [ -f "$state" ] && stop_server
        ;;
    url)
        [ -f "$state" ] || { echo "no Redis server was started; run: $0 start" >&2; exit 1; }
        url
        ;;
    destroy)
        if [ -f "$state" ]; then
            stop_server
            # shellcheck disable=SC1090
            source "$state"
            rm -rf "$DATA" "$state"
        fi
        # The certificates go with the last TLS server.
        if [ ! -f "$state_dir/postgres-tls.env" ] && [ ! -f "$state_dir/redis-tls.env" ]; then
            rm -rf "$certs"
        fi
        rmdir "$state_dir" 2>/dev/null || true
        ;;
    *)
        echo "usage: $0 start|stop|url|destroy|pid|pause|resume" >&2
        exit 2
        ;;
esac
