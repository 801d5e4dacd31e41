#!/usr/bin/env bash
# A throwaway PostgreSQL server for the session-store tests.
#
#   .ci/postgres.sh start    install PostgreSQL from Debian's packages when missing, create a
#                            cluster in a temporary folder and start it on 127.0.0.1 on a free
#                            port (a second start after stop restarts the same cluster, same
#                            port, same data); prints the connection URL
#   .ci/postgres.sh stop     stop the server, keep its data
#   .ci/postgres.sh url      print the connection URL
#   .ci/postgres.sh destroy  stop the server and delete its data
#   .ci/postgres.sh pid      print the server's process ids (the postmaster first, then the
#                            backends it started), one a line
#   .ci/postgres.sh pause    stop every server process with SIGSTOP: the server hangs, its
#                            connections stay open and unanswered (for the timeout tests)
#   .ci/postgres.sh resume   SIGCONT to every server process: it answers again
#
# With HPD_CI_TLS=1 every command acts on a second, TLS-only server (its own state, data and
# port): it accepts only TLS connections (hostssl), with a certificate for `localhost` signed by
# the throwaway CA of .ci/tls-certs.sh, and `url` prints
# postgres://postgres:PASSWORD@localhost:PORT/postgres?sslmode=verify-full&sslrootcert=CA_FILE.
#
# PostgreSQL refuses to run as root: as root, initdb and pg_ctl run as the `postgres` user.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/lib.sh"

state_dir="$(ci_state_dir)"
tls="${HPD_CI_TLS:-}"
state="$state_dir/postgres${tls:+-tls}.env"
certs="$state_dir/certs"

pg_bin() {
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
            printf '%s\n' "$dir"
            return 0
        fi
    done
    return 1
}

# Runs a PostgreSQL program as the cluster's owner.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

ensure_installed() {
    if pg_bin >/dev/null; then
        return 0
    fi
    # Debian's package would create and start a default cluster on port 5432: not wanted.
    mkdir -p /etc/postgresql-common
    if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
        echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
    fi
    ci_apt_install postgresql
    pg_bin >/dev/null || { echo "PostgreSQL was installed but initdb is not found" >&2; exit 1; }
}

url() {
    # shellcheck disable=SC1090
    source "$state"
    if [ -n "$tls" ]; then
        printf 'postgres://postgres:%s@localhost:%s/postgres?sslmode=verify-full&sslrootcert=%s\n' \
            "$PASSWORD" "$PORT" "$certs/ca.pem"
    else
        printf 'postgres://postgres:%s@127.0.0.1:%s/postgres\n' "$PASSWORD" "$PORT"
    fi
}

start_server() {
    # shellcheck disable=SC1090
    source "$state"
    local bin
    bin="$(pg_bin)"
    if as_owner "$bin/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
        return 0
    fi
    local options="-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DATA -c fsync=off"
    if [ -n "$tls" ]; then
        options="$options -c ssl=on -c ssl_cert_file=$DATA/server.pem -c ssl_key_file=$DATA/server.key"
    fi
    as_owner "$bin/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 -o "$options" start >&2
    ci_wait_port "$PORT" 30 || { echo "PostgreSQL did not open port $PORT" >&2; exit 1; }
}

# The postmaster's process id and those of its children, one a line.
server_pids() {
    # shellcheck disable=SC1090
    source "$state"
    local main
    main="$(head -n 1 "$DATA/postmaster.pid" 2>/dev/null)" || true
    [ -n "$main" ] && kill -0 "$main" 2>/dev/null || { echo "PostgreSQL is not running" >&2; return 1; }
    printf '%s\n' "$main"
    pgrep -P "$main" || true
}

case "${1:-}" in
    pid)
        [ -f "$state" ] || { echo "no PostgreSQL server was started; run: $0 start" >&2; exit 1; }
        server_pids
        ;;
    pause)
        [ -f "$state" ] || { echo "no PostgreSQL server was started; run: $0 start" >&2; exit 1; }
        pids="$(server_pids)"
        # The postmaster last, so it cannot start a process that escapes the pause.
        for pid in $(printf '%s\n' "$pids" | tail -n +2) $(printf '%s\n' "$pids" | head -n 1); do
            kill -STOP "$pid" 2>/dev/null || true
        done
        ;;
    resume)
        [ -f "$state" ] || { echo "no PostgreSQL server was started; run: $0 start" >&2; exit 1; }
        for pid in $(server_pids); do
            kill -CONT "$pid" 2>/dev/null || true
        done
        ;;
    start)
        ensure_installed
        if [ ! -f "$state" ] || [ ! -d "$(source "$state"; printf '%s' "$DATA")" ]; then
            mkdir -p "$state_dir"
            chmod 755 "$state_dir"
            data="$(mktemp -d "$state_dir/postgres.XXXXXX")"
            password="$(ci_password)"
            pwfile="$(mktemp)"
            printf '%s\n' "$password" > "$pwfile"
            if [ "$(id -u)" -eq 0 ]; then
                chown postgres "$data" "$pwfile"
            fi
            chmod 700 "$data"
            as_owner "$(pg_bin)/initdb" -D "$data" -U postgres --pwfile="$pwfile" \
                --auth-host=scram-sha-256 --auth-local=trust -E UTF8 >&2
            rm -f "$pwfile"
            if [ -n "$tls" ]; then
                # TLS only: no `host` line, so a connection without TLS is refused.
                bash "$here/tls-certs.sh" "$certs" >/dev/null
                cp "$certs/server.pem" "$certs/server.key" "$data/"
                printf 'local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n' > "$data/pg_hba.conf"
                if [ "$(id -u)" -eq 0 ]; then
                    chown postgres "$data/server.pem" "$data/server.key" "$data/pg_hba.conf"
                fi
                chmod 600 "$data/server.key"
            fi
            printf 'DATA=%s\nPORT=%s\nPASSWORD=%s\n' "$data" "$(ci_free_port)" "$password" > "$state"
        fi
        start_server
        url
        ;;
    stop)
        if [ -f "$state" ]; then
            # shellcheck disable=SC1090
            source "$state"
            as_owner "$(pg_bin)/pg_ctl" -D "$DATA" -m fast -w stop >&2 || true
        fi
        ;;
    url)
        [ -f "$state" ] || { echo "no PostgreSQL server was started; run: $0 start" >&2; exit 1; }
        url
        ;;
    destroy)
        if [ -f "$state" ]; then
            # shellcheck disable=SC1090
            source "$state"
            as_owner "$(pg_bin)/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
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
