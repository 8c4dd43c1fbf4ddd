#!/usr/bin/env bash
# System packages the tests need besides a browser (scripts/install-chromium.sh does that one):
#   haproxy     tests/studio/test_proxy.py runs `python -m studio.serve` (app workers behind HAProxy)
#   bubblewrap  the sandbox's second wall around student code (command: bwrap); tests/grading/test_sandbox.py
#   redis-server  tests/studio/test_room_store.py runs the class store against a real Redis
# Each is installed with apt-get (as root, or through sudo) unless it is already on the PATH. Where that is
# not possible (no apt-get, no root or sudo) it says so and exits 0: the tests that need the package are
# then skipped, except under CI=true, where they fail so that a missing install shows.
#
#   bash scripts/install-test-deps.sh             install what is missing
#   bash scripts/install-test-deps.sh --dry-run   say what it would do and print the commands, run nothing
#
# The --dry-run argument and apt-get (as root or through sudo) are scripts/apt.sh's, shared with
# install-chromium.sh.
set -euo pipefail

PACKAGES=(haproxy bubblewrap redis-server)   # Debian package names
COMMANDS=(haproxy bwrap redis-server)        # the command each installs, looked for on the PATH

here=${BASH_SOURCE[0]%/*}
[ "$here" != "${BASH_SOURCE[0]}" ] || here=.
# shellcheck source=scripts/apt.sh
source "$here/apt.sh"
dry_run_arg install-test-deps.sh "$@"

say() { echo "install-test-deps: $*"; }

missing=()
for i in "${!PACKAGES[@]}"; do
  pkg=${PACKAGES[$i]} cmd=${COMMANDS[$i]}
  if command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || [ -x "/usr/bin/$cmd" ]; then
    say "$pkg: already installed"
  else
    missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

why=0
sudo=$(apt_prefix) || why=$?
case $why in
  1) say "missing: ${missing[*]}; no apt-get here: install them with your system's package manager;" \
         "until then the tests that need them are skipped" >&2
     exit 0 ;;
  2) say "missing: ${missing[*]}; installing needs root (or sudo); until then the tests that need them" \
         "are skipped" >&2
     exit 0 ;;
esac
say "installing ${missing[*]} with apt-get${sudo:+ through sudo}"
apt_install "$sudo" "${missing[@]}"
