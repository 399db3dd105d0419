#!/bin/sh
# Deploys and rollbacks, in directories of their own behind a symlink (the layout of Capistrano and
# of many Debian services), under CADENCE_HOME (/opt/cadence):
#   repo/                 the clone releases are cut from
#   releases/<time>-<commit>/   one per deploy: the commit's files and its own node_modules
#   current -> releases/…       what the services run: their units name this path
#   previous -> releases/…      what `rollback` goes back to
# A deploy builds its release beside the running one, so its `npm ci` touches no file a running
# worker uses; it then moves `current` and reloads the workers, which replace themselves one at a
# time from it (supervisor.ts). When the new workers cannot become ready, every worker goes back
# to the release it ran, the reload fails saying why (reload-workers.sh), and `current` is moved
# back here: the old release serves throughout. Run as root; one deploy at a time.
set -eu
usage="usage: release.sh deploy [<commit>] | rollback
  deploy [<commit>]  pulls the clone's branch (or fetches and takes <commit>: a tag, a hash), builds
                     releases/<time>-<commit> with npm ci, points current at it, reloads the services
  rollback           points current back at previous, reloads the services
Layout under CADENCE_HOME (/opt/cadence): repo, releases/, current, previous (functions/production/README.md)."
home=${CADENCE_HOME:-/opt/cadence}
# The newest releases kept, besides current and previous.
keep=5

case "${1:-}" in
  deploy) [ $# -le 2 ] || { echo "$usage" >&2; exit 2; } ;;
  rollback) [ $# -eq 1 ] || { echo "$usage" >&2; exit 2; } ;;
  -h | --help) echo "$usage"; exit 0 ;;
  *) echo "$usage" >&2; exit 2 ;;
esac

mkdir -p "$home/releases"
exec 9> "$home/releases/.lock"
flock -n 9 || { echo "release.sh: another deploy or rollback is under way ($home/releases/.lock)" >&2; exit 1; }

# Moves `link` to `target` in one rename: a reader sees the old release or the new, never neither.
point() {
  ln -sfn "$2" "$home/.$1.new"
  mv -T "$home/.$1.new" "$home/$1"
}

# Reloads a service that runs; one that does not will start from `current` when started.
reload() {
  if systemctl is-active --quiet "$1"; then systemctl reload "$1"; fi
}

# Moves current to `target` (previous to where current was) and reloads; when the workers cannot
# move, puts both back and fails.
switch() {
  target=$1
  was=$(readlink "$home/current" 2>/dev/null || true)
  point current "$target"
  if ! reload cadence-workers; then
    if [ -n "$was" ]; then point current "$was"; fi
    echo "release.sh: $target did not start; current is back on ${was:-nothing}, whose workers serve" >&2
    exit 1
  fi
  if [ -n "$was" ] && [ "$was" != "$target" ]; then point previous "$was"; fi
  # The proxy's configuration is the release's too: a configuration check, then a seamless reload.
  reload cadence-proxy
  echo "release.sh: current is $target"
}

if [ "$1" = rollback ]; then
  target=$(readlink "$home/previous" 2>/dev/null) || { echo "release.sh: no previous release to go back to" >&2; exit 1; }
  switch "$target"
  exit 0
fi

repo="$home/repo"
if [ $# -eq 2 ]; then
  git -C "$repo" fetch --quiet --tags
  commit=$(git -C "$repo" rev-parse --verify --quiet "$2^{commit}") || { echo "release.sh: no commit $2 in $repo" >&2; exit 1; }
else
  git -C "$repo" pull --quiet --ff-only
  commit=$(git -C "$repo" rev-parse HEAD)
fi
name="$(date -u +%Y%m%d%H%M%S)-$(git -C "$repo" rev-parse --short=12 "$commit")"
building="$home/releases/.$name"
trap 'rm -rf "$building"' EXIT
mkdir "$building"
git -C "$repo" archive "$commit" | tar -x -C "$building"
# Only what the services run (deno included); a release is never written to afterwards.
(cd "$building" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
mv "$building" "$home/releases/$name"
trap - EXIT
switch "releases/$name"

# The oldest releases go, never current's or previous's.
current=$(readlink "$home/current")
previous=$(readlink "$home/previous" 2>/dev/null || true)
ls -1 "$home/releases" | sort -r | tail -n +$((keep + 1)) | while read -r old; do
  if [ "releases/$old" != "$current" ] && [ "releases/$old" != "$previous" ]; then rm -rf "$home/releases/$old"; fi
done
