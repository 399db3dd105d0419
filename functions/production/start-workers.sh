#!/bin/sh
# The production start: `npm run start:workers`, and cadence-workers.service's ExecStart. Raises the
# soft limit on open files to the hard one (10240 where the hard one is `unlimited`, as on macOS),
# tells the workers what it got (Deno reads /proc/self/limits only with --allow-all), and execs the
# supervisor (supervisor.ts), which runs one worker per core with the arguments after its own: the
# release directory as this script was reached (/opt/cadence/current, the symlink a deploy moves:
# release.sh), then the API entry with `npm start`'s permissions and V8 flags. exec, so a service
# manager's signals reach the supervisor itself.
cd "$(dirname "$0")/../.." || exit 1
usage="usage: npm run start:workers
Runs one worker process of the API per core (DENO_JOBS), worker i on PORT+i-1 (8000 up) with its
admin listener on ADMIN_PORT+i-1 (9000 up), for HAProxy to spread requests over
(functions/production/README.md). SIGHUP restarts the workers one at a time; SIGTERM stops them.
It takes no arguments; it reads the environment as npm start does (README.md, Configuration), and
needs DATABASE_URL and REDIS_URL (or Upstash) once there is more than one worker."
case "$#:${1:-}" in
  0:) ;;
  1:--help | 1:-h) echo "$usage"; exit 0 ;;
  *) echo "unknown argument: $1" >&2; echo "$usage" >&2; exit 2 ;;
esac
ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || ulimit -Sn 10240 2>/dev/null
FILE_DESCRIPTOR_LIMIT="$(ulimit -Sn)"
export FILE_DESCRIPTOR_LIMIT
# Under systemd (RuntimeDirectory=), the supervisor writes there how each rolling restart ended,
# for `systemctl reload` to wait on (reload-workers.sh); it writes nothing else.
write=""
[ -n "${RUNTIME_DIRECTORY:-}" ] && write="--allow-write=$RUNTIME_DIRECTORY"
# $PWD as cd left it: the path as reached, symlink and all, not the release it names today.
exec node_modules/.bin/deno run --allow-run --allow-env --allow-read $write functions/production/supervisor.ts "$PWD" \
  run --allow-net --allow-env --allow-read --allow-write --allow-sys --v8-flags=--max-semi-space-size=8,--heap-growing-percent=20 functions/api/index.ts
