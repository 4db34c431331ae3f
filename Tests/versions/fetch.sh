#!/usr/bin/env bash
# Unpacks newer SQLite releases from Debian's own registry into
# build/sqlite-versions, without touching the system: libsqlite3-0 3.46.1
# (trixie) with trixie's sqlite3 shell, which links it, and libsqlite3-0
# 3.53.4 (forky) with forky's shell, which embeds SQLite instead; each with
# its release's libc6, whose loader runs our test binaries against it:
#   build/sqlite-versions/VERSION/run PROGRAM ARGS...
#   build/sqlite-versions/VERSION/sqlite3 ARGS...      (the shell)
# Apt reads a sources folder and lists folder of its own (-o Dir::...); the
# mirror is the one the system's sources name.  Needs root only for apt's
# lock-free download, which root has.  Prints the versions it unpacked.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=build/sqlite-versions
mkdir -p "$dest/apt/parts" "$dest/apt/lists/partial" "$dest/debs"
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}
printf 'Types: deb\nURIs: %s\nSuites: trixie forky\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
  "$mirror" > "$dest/apt/parts/newer.sources"
apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$PWD/$dest/apt/parts"
          -o "Dir::State::Lists=$PWD/$dest/apt/lists" -o Debug::NoLocking=1
          -o APT::Get::AllowUnauthenticated=false)
# A mirror caught mid-sync fails an index now and then: try again once.
if [ ! -e "$dest/apt/.updated" ]; then
  apt-get "${apt_opts[@]}" update -qq || { sleep 30; apt-get "${apt_opts[@]}" update -qq; }
  touch "$dest/apt/.updated"
fi
# version_in SUITE PACKAGE: the candidate version of PACKAGE in SUITE.
version_in() {
  apt-cache "${apt_opts[@]}" madison "$2" | awk -v suite="$1" '$0 ~ suite"/main" { print $3; exit }'
}
for suite in trixie forky; do
  sqlite=$(version_in "$suite" libsqlite3-0)
  libc=$(version_in "$suite" libc6)
  [ -n "$sqlite" ] && [ -n "$libc" ] || { echo "no libsqlite3-0 or libc6 in $suite" >&2; exit 1; }
  upstream=${sqlite%%-*}
  root=$dest/$upstream
  if [ ! -x "$root/run" ]; then
    rm -rf "$root" && mkdir -p "$root"
    (cd "$dest/debs" && apt-get "${apt_opts[@]}" download -qq "libsqlite3-0=$sqlite" "libc6=$libc" "sqlite3=$sqlite" 2>&1 |
       grep -v 'Download is performed unsandboxed' || true)
    for deb in "$dest/debs/libsqlite3-0_${sqlite}_"*.deb "$dest/debs/libc6_${libc}_"*.deb "$dest/debs/sqlite3_${sqlite}_"*.deb; do
      dpkg -x "$deb" "$root"
    done
    lib=$PWD/$root/usr/lib/x86_64-linux-gnu
    cat > "$root/run" <<RUN
#!/bin/sh
# Runs a program against SQLite $upstream and its libc (Tests/versions/fetch.sh).
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" "\$@"
RUN
    printf '#!/bin/sh\nexec "%s/run" "%s/usr/bin/sqlite3" "$@"\n' "$PWD/$root" "$PWD/$root" > "$root/sqlite3"
    chmod +x "$root/run" "$root/sqlite3"
  fi
  echo "$upstream"
done
