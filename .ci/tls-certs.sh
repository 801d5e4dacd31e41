#!/usr/bin/env bash
# Throwaway certificates for the TLS-only test servers (.ci/postgres.sh and .ci/redis.sh with
# HPD_CI_TLS=1):
#
#   .ci/tls-certs.sh DIR   make, once, in DIR:
#     ca.pem, ca.key             a private certificate authority
#     server.pem, server.key     a server certificate it signed, for the host name `localhost`
#                                only (not 127.0.0.1: connecting by address is a wrong host name)
#     wrong-ca.pem               another authority, which signed nothing the servers use
#   and print DIR.
set -euo pipefail
dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
if [ ! -f "$dir/server.pem" ] || [ ! -f "$dir/wrong-ca.pem" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=hpd-agent test CA" \
        -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
        -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' \
        > "$work/ext.cnf"
    openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
        -CAcreateserial -days 30 -extfile "$work/ext.cnf" -out "$work/server.pem" 2>/dev/null
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=hpd-agent wrong CA" \
        -keyout "$work/wrong-ca.key" -out "$work/wrong-ca.pem" 2>/dev/null
    for file in ca.pem ca.key server.pem server.key wrong-ca.pem; do
        cp "$work/$file" "$dir/$file"
    done
    chmod 600 "$dir/ca.key" "$dir/server.key"
    chmod 644 "$dir/ca.pem" "$dir/server.pem" "$dir/wrong-ca.pem"
fi
printf '%s\n' "$dir"
