#!/bin/sh
# The system tools a make target needs, installed when this machine can (root and apt-get),
# otherwise named with the exact command to run, before anything else starts.
#
# usage: scripts/system_deps.sh TARGET CHECK=PACKAGE...
#   CHECK is a command name looked up on PATH, an absolute path that must be executable, or
#   "ensurepip" (Python's venv support, which Debian ships apart from python3).
#   PACKAGE is the Debian package that provides it.
# SYSTEM_DEPS_INSTALL=0 only checks (and names the command), even as root.
# Exit status: 0 when everything is there (after installing), 1 when something is missing.
set -u
target="$1"
shift
python="${PYTHON:-python3}"

present() {
  case "$1" in
    ensurepip) "$python" -c "import ensurepip, venv" >/dev/null 2>&1 ;;
    /*) [ -x "$1" ] ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

missing() {
  for pair in "$@"; do
    check="${pair%%=*}"
    package="${pair#*=}"
    present "$check" || printf '%s %s\n' "$check" "$package"
  done
}

lacking="$(missing "$@")"
[ -z "$lacking" ] && exit 0
packages="$(printf '%s\n' "$lacking" | awk '{print $2}' | sort -u | tr '\n' ' ' | sed 's/ $//')"

if [ "${SYSTEM_DEPS_INSTALL:-1}" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "make $target: installing $packages (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
  lacking="$(missing "$@")"
  [ -z "$lacking" ] && exit 0
  echo "make $target: apt-get could not install everything."
fi

names="$(printf '%s\n' "$lacking" | awk '{print $1}' | tr '\n' ' ' | sed 's/ $//')"
echo "make $target stops here: this machine lacks $names."
echo "Install them, then run make $target again:"
echo "    sudo apt-get install -y $packages"
exit 1
