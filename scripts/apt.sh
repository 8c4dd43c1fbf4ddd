# Shared by scripts/install-chromium.sh and scripts/install-test-deps.sh, which source it (it is not run on
# its own): their --dry-run argument, and apt-get as root or through sudo. Plain bash only: the tests run the
# scripts with a made-up PATH of stand-in commands.

DRY_RUN=0

dry_run_arg() {  # dry_run_arg SCRIPT "$@": sets DRY_RUN from --dry-run; anything else: usage, exit 2
  case "${2:-}" in
    --dry-run) DRY_RUN=1 ;;
    "") ;;
    *) echo "usage: bash scripts/$1 [--dry-run]" >&2; exit 2 ;;
  esac
}

run() {  # run a command, or only print it with --dry-run
  if [ "$DRY_RUN" -eq 1 ]; then
    echo "would run: $*"
  else
    "$@"
  fi
}

apt_prefix() {  # prints "" as root, "sudo" where sudo exists; returns 1 without apt-get, 2 without root or sudo
  command -v apt-get >/dev/null 2>&1 || return 1
  if [ "$(id -u)" -eq 0 ]; then
    echo ""
  elif command -v sudo >/dev/null 2>&1; then
    echo "sudo"
  else
    return 2
  fi
}

apt_install() {  # apt_install SUDO PACKAGE...: refresh the package lists, then install without recommends
  local sudo=$1
  shift
  run $sudo apt-get update -qq &&
    run $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}
