# Shared helpers of .ci/postgres.sh and .ci/redis.sh (sourced, not run).

# Where a server keeps its state file and data: one folder per checkout, so two checkouts on one
# machine never share a server.
ci_state_dir() {
    local root key
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    key="$(printf '%s' "$root" | cksum | cut -d' ' -f1)"
    printf '%s/hpd-agent-ci-%s\n' "${TMPDIR:-/tmp}" "$key"
}

# A TCP port on 127.0.0.1 that nothing listens on (a connection attempt is refused).
ci_free_port() {
    local port tries
    for tries in $(seq 1 200); do
        port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            printf '%s\n' "$port"
            return 0
        fi
    done
    echo "no free port found on 127.0.0.1" >&2
    return 1
}

# A random password of 24 hex digits.
ci_password() {
    head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'
}

# Installs Debian packages, non-interactively, without starting the services they ship (the
# scripts start their own servers on free ports).
ci_apt_install() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing $*: install it (apt-get install $*) or run as root" >&2
        return 1
    fi
    local made_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        made_policy=1
    fi
    local status=0
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || status=$?
    if [ "$status" -eq 0 ]; then
        apt-get install -y -qq --no-install-recommends "$@" >&2 || status=$?
    fi
    if [ -n "$made_policy" ]; then
        rm -f /usr/sbin/policy-rc.d
    fi
    return "$status"
}

# Waits until a TCP port accepts connections, at most $2 seconds.
ci_wait_port() {
    local port=$1 seconds=${2:-30} i
    for i in $(seq 1 $((seconds * 10))); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}
