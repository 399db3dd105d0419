#!/bin/sh
# `npm run -s certificate -- [host name] [directory]`: a self-signed TLS certificate for the proxy,
# until a real one replaces it (certbot: functions/README.md, "Certificates"). It is a leaf for the
# host's name (and localhost, 127.0.0.1), not a CA: clients built on rustls or webpki (Deno's
# fetch, so `npm run check`) refuse a CA certificate served as the server's own
# (`CaUsedAsEndEntity`), which is what `openssl req -x509` makes unless told otherwise.
#
# Writes, in the directory (/etc/cadence by default):
#   tls.pem              the certificate, then its private key: HAProxy's CADENCE_TLS_CERT (mode 640, group haproxy)
#   tls-certificate.pem  the certificate alone, for clients to trust: curl --cacert, npm run check --ca
# An ECDSA P-256 key: a flood of handshakes costs the proxy less than with RSA.
set -eu

usage="usage: npm run -s certificate -- [host name] [directory]
A self-signed TLS certificate for the proxy: a leaf for the host's name (and localhost, 127.0.0.1), not a CA.
  host name   the name clients reach the proxy by (default: hostname -f)
  directory   where tls.pem (certificate and key, for CADENCE_TLS_CERT) and tls-certificate.pem go (default: /etc/cadence)"
case "${1:-}" in
  --help) echo "$usage"; exit 0 ;;
  -*) echo "$usage" >&2; exit 2 ;;
esac
host="${1:-$(hostname -f 2>/dev/null || hostname)}"
directory="${2:-/etc/cadence}"
[ -n "$host" ] || { echo "$usage" >&2; exit 2; }

mkdir -p "$directory"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout "$work/key.pem" -out "$work/certificate.pem" -days 825 -subj "/CN=$host" \
  -addext "subjectAltName=DNS:$host,DNS:localhost,IP:127.0.0.1" \
  -addext "basicConstraints=critical,CA:FALSE" \
  -addext "keyUsage=critical,digitalSignature" \
  -addext "extendedKeyUsage=serverAuth" 2>/dev/null
# Written beside, then renamed: a proxy reloading meanwhile reads the old file or the new, never half.
umask 077
cat "$work/certificate.pem" "$work/key.pem" > "$directory/tls.pem.new"
# HAProxy's service runs as the haproxy user (cadence-proxy.service): its group may read the key.
if getent group haproxy >/dev/null && chgrp haproxy "$directory/tls.pem.new" 2>/dev/null; then chmod 640 "$directory/tls.pem.new"; fi
mv "$directory/tls.pem.new" "$directory/tls.pem"
umask 022
cp "$work/certificate.pem" "$directory/tls-certificate.pem.new"
mv "$directory/tls-certificate.pem.new" "$directory/tls-certificate.pem"
echo "$directory/tls.pem: a certificate for $host (and localhost, 127.0.0.1) with its key, for CADENCE_TLS_CERT"
echo "$directory/tls-certificate.pem: the certificate alone, for clients to trust (curl --cacert, npm run check -- --ca)"
