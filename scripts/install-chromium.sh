#!/usr/bin/env bash
# A Chromium for the browser tests, found or installed, the first way that works:
#   1. one already installed: $STUDIO_CHROMIUM, else chromium, chromium-browser, google-chrome,
#      google-chrome-stable or chrome on the PATH, else Chrome or Chromium in /Applications (macOS);
#   2. otherwise the system's package through apt-get, as root or through sudo (Debian, Ubuntu);
#   3. otherwise Playwright's own Chromium: python -m playwright install chromium (any OS, no root).
# It says which one it used. testkit/browser.py looks for a browser in the same order (1, then Playwright's).
#
#   bash scripts/install-chromium.sh             find or install
#   bash scripts/install-chromium.sh --dry-run   say what it would do and print the commands, run nothing
#
# Another system package the tests need goes into APT_PACKAGES; apt installs them together. The --dry-run
# argument and apt-get (as root or through sudo) are scripts/apt.sh's, shared with install-test-deps.sh.
set -euo pipefail

APT_PACKAGES=(chromium)
BROWSER_NAMES=(chromium chromium-browser google-chrome google-chrome-stable chrome)
MAC_APPS=("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"
          "/Applications/Chromium.app/Contents/MacOS/Chromium")
PYTHON=${PYTHON:-$(command -v python || command -v python3 || echo python3)}

here=${BASH_SOURCE[0]%/*}
[ "$here" != "${BASH_SOURCE[0]}" ] || here=.
# shellcheck source=scripts/apt.sh
source "$here/apt.sh"
dry_run_arg install-chromium.sh "$@"

say() { echo "install-chromium: $*"; }

installed_browser() {  # prints the path of an installed Chromium or Chrome; fails if there is none
  if [ -n "${STUDIO_CHROMIUM:-}" ]; then
    echo "$STUDIO_CHROMIUM"; return 0
  fi
  local name app
  for name in "${BROWSER_NAMES[@]}"; do
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
  done
  for app in "${MAC_APPS[@]}"; do
    if [ -x "$app" ]; then echo "$app"; return 0; fi
  done
  return 1
}

playwright_install() {
  run "$PYTHON" -m playwright install chromium
}

if path=$(installed_browser); then
  if [ ! -x "$path" ]; then
    say "STUDIO_CHROMIUM=$path is not an executable file; set it to a Chromium or Chrome, or unset it" >&2
    exit 1
  fi
  say "using the installed browser $path (nothing to install)"
  exit 0
fi

if sudo=$(apt_prefix); then
  say "no Chromium or Chrome found; installing ${APT_PACKAGES[*]} with apt-get${sudo:+ through sudo}"
  if apt_install "$sudo" "${APT_PACKAGES[@]}"; then
    if [ "$DRY_RUN" -eq 1 ]; then exit 0; fi
    if path=$(installed_browser); then
      say "installed $path"
      exit 0
    fi
    say "apt-get installed ${APT_PACKAGES[*]} but no chromium command appeared; trying Playwright's Chromium"
  else
    say "apt-get failed; trying Playwright's Chromium"
  fi
else
  say "no Chromium or Chrome found, and apt-get cannot be used here (no apt-get, or neither root nor sudo)"
fi

say "installing Playwright's own Chromium with $PYTHON -m playwright install chromium"
playwright_install
say "the browser tests use Playwright's Chromium (set STUDIO_CHROMIUM to use another browser)"
