#!/usr/bin/env bash
# The Debian packages `make test` needs, installed before anything is built:
# a fresh clone on a fresh machine passes `make test` by itself.  As root the
# missing packages are installed; otherwise the script stops at once, naming
# the command to run.  Swift (the toolchain) and Python 3 are assumed, as
# the README's prerequisites say.
set -euo pipefail

missing=()
add_arm64=no
# arm64: the C tests cross-compiled and run under qemu-user.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  add_arm64=yes
fi
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
dpkg -s libsqlite3-dev:arm64 >/dev/null 2>&1 || missing+=(libsqlite3-dev:arm64)
# 32-bit C tests: gcc's multilib files (the gcc-multilib package would
# remove the arm64 cross compiler; gcc-12-multilib does not).
dpkg -s gcc-12-multilib >/dev/null 2>&1 || missing+=(gcc-12-multilib)
command -v sqlite3 >/dev/null || missing+=(sqlite3)
# With arm64 added, a bare package name is ambiguous to dpkg -s.
dpkg -s "libsqlite3-dev:$(dpkg --print-architecture)" >/dev/null 2>&1 || missing+=(libsqlite3-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v cc >/dev/null || missing+=(gcc)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
# The sync example's server (Tests/sync/run.sh starts a cluster under build/).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)

[ ${#missing[@]} -eq 0 ] && exit 0

commands="apt-get update && apt-get install -y ${missing[*]}"
[ "$add_arm64" = yes ] && commands="dpkg --add-architecture arm64 && $commands"
if [ "$(id -u)" -ne 0 ]; then
  echo "make test: missing Debian packages: ${missing[*]}" >&2
  echo "make test: run as root:  $commands" >&2
  echo "make test: then run make test again." >&2
  exit 1
fi
echo "make test: installing ${missing[*]}"
[ "$add_arm64" = yes ] && dpkg --add-architecture arm64
# A mirror caught mid-sync fails one index now and then; the install still
# fails loudly if a package cannot be had.
for attempt in 1 2; do
  apt-get update -qq || echo "apt-get update reported errors; installing anyway"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" && exit 0
  [ "$attempt" = 2 ] && { echo "make test: could not install ${missing[*]}" >&2; exit 1; }
  echo "install failed; trying again in a minute (a mirror may be syncing)"
  sleep 60
done
