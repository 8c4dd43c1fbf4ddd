#!/usr/bin/env bash
# System packages the tests need besides a browser (scripts/install-chromium.sh does that one):
#   haproxy   tests/test_proxy.py runs `python -m studio.serve` (app workers behind HAProxy)
# Each is installed with apt-get (as root, or through sudo) unless it is already on the PATH. Where that is
# not possible (no apt-get, no root or sudo) it says so and exits 0: the tests that need the package are
# then skipped, except under CI=true, where they fail so that a missing install shows.
#
#   bash scripts/install-test-deps.sh             install what is missing
#   bash scripts/install-test-deps.sh --dry-run   say what it would do, run nothing
set -euo pipefail

PACKAGES=(haproxy)   # Debian package names; each is also the command looked for on the PATH
DRY_RUN=0
case "${1:-}" in
  --dry-run) DRY_RUN=1 ;;
  "") ;;
  *) echo "usage: bash scripts/install-test-deps.sh [--dry-run]" >&2; exit 2 ;;
esac

say() { echo "install-test-deps: $*"; }

missing=()
for pkg in "${PACKAGES[@]}"; do
  if command -v "$pkg" >/dev/null 2>&1 || [ -x "/usr/sbin/$pkg" ]; then
    say "$pkg: already installed"
  else
    missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  say "missing: ${missing[*]}; no apt-get here: install them with your system's package manager;" \
      "until then the tests that need them are skipped" >&2
  exit 0
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    say "missing: ${missing[*]}; installing needs root (or sudo); until then the tests that need them" \
        "are skipped" >&2
    exit 0
  fi
  SUDO=(sudo)
fi
cmds=("${SUDO[*]} apt-get update -qq"
      "${SUDO[*]} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing[*]}")
for cmd in "${cmds[@]}"; do
  say "${cmd# }"
  [ "$DRY_RUN" -eq 1 ] || eval "${cmd# }"
done
