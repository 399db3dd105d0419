#!/bin/sh
# Writes the proxy's `backend workers` (haproxy.cfg's second file): one server per worker, worker i
# at 127.0.0.1:PORT+i-1 checked on ADMIN_PORT+i-1, as `npm run start:workers` places them
# (supervisor.ts). cadence-proxy.service runs it before each start and reload.
#   proxy-servers.sh <output> [workers' environment file]
# PORT and ADMIN_PORT come from the environment file when it sets them (the workers' own,
# /etc/cadence/cadence.env: a line there wins over the environment, as systemd's EnvironmentFile=
# does), else from the environment, else 8000 and 9000 (functions/app/config.ts). Only those two
# lines are read from the file: it holds the database's password and the signing secrets, which is
# why the unit runs this as root ("+") and never hands the file to HAProxy. The count is
# CADENCE_WORKERS (proxy.env), at least 1.
#
# Why a generated file: HAProxy expands "${VAR}" in its configuration but does no arithmetic, so
# PORT+i-1 cannot be written there; a per-server variable would still need a line per possible
# worker. Generated, the servers follow PORT, ADMIN_PORT and the count with no edit to a tracked
# file, and any count works.
set -eu
usage="usage: proxy-servers.sh <output> [workers' environment file]"
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "$usage" >&2; exit 2; }
output=$1

# The last `NAME=value` line of the file for NAME, with systemd's optional quotes, or nothing.
setting() {
  sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$2" | tail -n 1 | sed 's/[[:space:]]*$//; s/^"\(.*\)"$/\1/; s/^'"'"'\(.*\)'"'"'$/\1/'
}
if [ $# -eq 2 ]; then
  [ -r "$2" ] || { echo "proxy-servers.sh: cannot read $2" >&2; exit 1; }
  from_file=$(setting PORT "$2")
  PORT=${from_file:-${PORT:-}}
  from_file=$(setting ADMIN_PORT "$2")
  ADMIN_PORT=${from_file:-${ADMIN_PORT:-}}
fi
port=${PORT:-8000}
admin_port=${ADMIN_PORT:-9000}
workers=${CADENCE_WORKERS:-}

# A number from 1 to 65535 for the last worker too; 0 (a free port each) cannot be followed.
check() {
  case "$2" in
    '' | *[!0-9]*) echo "proxy-servers.sh: $1 must be a number (it is '$2')" >&2; exit 1 ;;
  esac
}
check CADENCE_WORKERS "$workers"
check PORT "$port"
check ADMIN_PORT "$admin_port"
# Leading zeros dropped, as the workers read the number (08000 is 8000 there; sh would read octal),
# and more than five digits refused before sh's arithmetic meets them.
decimal() {
  value=$(printf '%s' "$2" | sed 's/^0*//')
  [ ${#value} -le 5 ] || { echo "proxy-servers.sh: $1 is past 65535 (it is '$2')" >&2; exit 1; }
  printf '%s' "${value:-0}"
}
workers=$(decimal CADENCE_WORKERS "$workers")
port=$(decimal PORT "$port")
admin_port=$(decimal ADMIN_PORT "$admin_port")
[ "$workers" -ge 1 ] || { echo "proxy-servers.sh: CADENCE_WORKERS must be 1 or more (the workers' count: DENO_JOBS, else nproc)" >&2; exit 1; }
for name in PORT ADMIN_PORT; do
  first=$port
  [ $name = PORT ] || first=$admin_port
  if [ "$first" -lt 1 ] || [ $((first + workers - 1)) -gt 65535 ]; then
    echo "proxy-servers.sh: $name=$first leaves no port from 1 to 65535 for each of $workers workers ($name 0, a free port each, cannot be followed by the proxy)" >&2
    exit 1
  fi
done

# Written beside under a name made here (mktemp creates it, refusing any file or link already
# there), then renamed, so a check or a reload never reads half of it and root never writes through
# a link someone else left. The unit keeps the file in a directory of root's (/run/cadence): the
# proxy's own RuntimeDirectory is the haproxy user's, who could otherwise swap the name between
# its creation and the write.
mkdir -p -m 755 "$(dirname "$output")"
partial=$(mktemp "$output.XXXXXX")
{
  echo "# Written by functions/production/proxy-servers.sh: PORT=$port ADMIN_PORT=$admin_port CADENCE_WORKERS=$workers."
  echo "backend workers from workers"
  i=1
  while [ "$i" -le "$workers" ]; do
    echo "    server w$i 127.0.0.1:$((port + i - 1)) port $((admin_port + i - 1))"
    i=$((i + 1))
  done
} >"$partial"
chmod 644 "$partial"
mv -f "$partial" "$output"
