#!/usr/bin/env bash
# Unpacks Debian's i386 libsqlite3 into build/i386 for the 32-bit C tests,
# with the i386 kernel headers (asm/errno.h: gcc-12-multilib has none),
# without installing it: a multiarch install would have to match the
# native package's version exactly. Needs root (apt); make test calls it
# (Tests/run_all.sh) when the 32-bit toolchain is there and build/i386 is not.
set -eu
cd "$(dirname "$0")/../../.."
dest=build/i386
[ -e "$dest/usr/lib/i386-linux-gnu/libsqlite3.so" ] && [ -e "$dest/usr/include/i386-linux-gnu/asm/errno.h" ] && exit 0
mkdir -p "$dest/debs"
added=""
if ! dpkg --print-foreign-architectures | grep -qx i386; then
  dpkg --add-architecture i386
  added=yes
fi
apt-get update -qq || echo "apt-get update reported errors; downloading anyway"
(cd "$dest/debs" && apt-get download libsqlite3-0:i386 libsqlite3-dev:i386 linux-libc-dev:i386)
for deb in "$dest"/debs/*.deb; do dpkg -x "$deb" "$dest"; done
if [ -n "$added" ]; then
  dpkg --remove-architecture i386
  apt-get update -qq || true
fi
