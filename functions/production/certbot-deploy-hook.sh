#!/bin/sh
# certbot's deploy hook (`certbot certonly ... --deploy-hook <this file>`, kept for every renewal by
# certbot.timer): certbot runs it after each certificate it obtains or renews, with RENEWED_LINEAGE
# naming the live directory. HAProxy reads one PEM file, the chain then the key: it is written whole
# beside the old one and renamed over it, readable by the proxy's group only, then the proxy reloads
# (seamlessly: the connections it holds are served to their end, new ones go to the new process).
#   CADENCE_TLS_CERT  the file to write, /etc/cadence/tls.pem unless set (as proxy.env names it)
set -eu
: "${RENEWED_LINEAGE:?run by certbot, which names the renewed certificate's directory}"
bundle="${CADENCE_TLS_CERT:-/etc/cadence/tls.pem}"
umask 077
cat "$RENEWED_LINEAGE/fullchain.pem" "$RENEWED_LINEAGE/privkey.pem" > "$bundle.new"
chgrp haproxy "$bundle.new"
chmod 640 "$bundle.new"
mv "$bundle.new" "$bundle"
systemctl reload cadence-proxy
