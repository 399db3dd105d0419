#!/bin/sh
# cadence-workers.service's ExecReload: SIGHUP to the supervisor (its pid, $MAINPID, the argument),
# then waits for the rolling restart that signal asks for to end, so that `systemctl reload` ends
# when every worker runs the new release, and fails, saying why, when the release could not start
# and every worker went back to the one it ran (supervisor.ts). systemd bounds the wait by the
# unit's TimeoutStartSec (it arms ExecReload with the start timeout).
#
# The supervisor writes `<round> <state> <release> <why>` to $RUNTIME_DIRECTORY/rolling-restart at
# each round's start (running) and end (done, stopped). The round this signal asks for is the one
# after the last written: a round under way read the release before this reload moved it, and one
# queued behind it reads it when it starts.
set -eu
pid=${1:?usage: reload-workers.sh <supervisor pid>}
rounds="${RUNTIME_DIRECTORY:?reload-workers.sh runs as cadence-workers.service ExecReload (RuntimeDirectory=)}"
rounds="${rounds%%:*}/rolling-restart"
last=0
[ -f "$rounds" ] && read -r last _ < "$rounds"
wanted=$((last + 1))
kill -HUP "$pid"
while :; do
  if [ -f "$rounds" ] && read -r at state release why < "$rounds" && [ "$at" -ge "$wanted" ] && [ "$state" != running ]; then
    if [ "$state" = done ]; then
      echo "every worker runs $release"
      exit 0
    fi
    echo "the workers did not move to $release: $why" >&2
    exit 1
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "the supervisor ($pid) exited during the rolling restart" >&2
    exit 1
  fi
  # A shell has no way to wait on a file; five looks a second cost nothing beside a worker's start.
  sleep 0.2
done
