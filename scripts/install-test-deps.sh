#!/usr/bin/env bash
# System packages the tests need besides a browser (scripts/install-chromium.sh does that one):
#   haproxy     tests/studio/test_proxy.py runs `python -m studio.serve` (app workers behind HAProxy)
#   bubblewrap  the sandbox's second wall around student code (command: bwrap); tests/grading/test_sandbox.py
#   redis-server  tests/studio/test_room_store.py runs the class store against a real Redis
# and, from npm, the JavaScript the browser tests load into a page:
#   axe-core    tests/browser/test_accessibility.py (WCAG checks in Chromium), the version package-lock.json
#               pins, into ./node_modules (`npm ci`); skipped when that version is already there
# Each package is installed with apt-get (as root, or through sudo) unless it is already on the PATH. Where that is
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

version_in() {  # version_in FILE NAME: the version string after "NAME": in FILE, "" when none (bash only)
  local line re="\"$2\": *\"([^\"]+)\""
  [ -r "$1" ] || return 0
  while IFS= read -r line; do
    if [[ $line =~ $re ]]; then echo "${BASH_REMATCH[1]}"; return 0; fi
  done < "$1"
}

root=$(cd "$here/.." && pwd)
pinned=$(version_in "$root/package.json" axe-core)
have=$(version_in "$root/node_modules/axe-core/package.json" version)
if [ "$have" = "$pinned" ]; then
  say "axe-core $pinned: already installed"
elif command -v npm >/dev/null 2>&1; then
  say "axe-core $pinned: npm ci"
  (cd "$root" && run npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) || {
    say "npm ci failed: the accessibility test is skipped until it works" >&2
    [ "${CI:-}" != "true" ] || exit 1
  }
else
  say "axe-core: no npm here: install Node.js (with npm); until then the accessibility test is skipped" >&2
  [ "${CI:-}" != "true" ] || exit 1
fi

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
