#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests, unless one is already there.
# Playwright drives this system browser; it never downloads its own.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium
