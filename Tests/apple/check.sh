#!/usr/bin/env bash
# The Apple-platforms check: ext/ compiled for iOS and macOS against each
# SDK's own headers, and a small app (app.c) linked against each SDK's .tbd
# stubs, as an app that depends on the package is.  Nothing Apple's is run.
#
#   bash Tests/apple/check.sh DIR      (or: make test-apple APPLE_SDKS=DIR)
#
# DIR holds SDKs laid out as Xcode has them: DIR/iPhoneOS18.2.sdk/usr/include,
# DIR/iPhoneOS18.2.sdk/usr/lib/libsqlite3.tbd, DIR/MacOSX14.2.sdk/...  The
# SDK stubs come from public repositories; none of Apple's files is ever
# committed here.  Every iPhoneOS*.sdk and MacOSX*.sdk in DIR is checked:
#   - compiled as SwiftPM compiles the CSQLiteTriggers target (clang,
#     -DSQLITE_CORE, the package's lowest deployment targets: iOS 16 arm64,
#     macOS 13 arm64 and x86_64), failing on any error or warning;
#   - linked with ld64.lld (Debian's lld-19, unpacked into build/apple-lld
#     with apt-get download and dpkg -x, never installed) where the SDK has
#     libSystem.tbd and libsqlite3.tbd, failing on any undefined symbol, and
#     the preupdate hook must be a weak import (absent from an SDK's SQLite,
#     the change feed refuses at run time instead of the app not launching).
# Its last line is "apple-sdks: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
sdks_dir=${1:-}
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
finish() { echo "apple-sdks: $passed passed, $failed failed"; exit $((failed > 0)); }

if [ -z "$sdks_dir" ] || [ ! -d "$sdks_dir" ]; then
  echo "usage: bash Tests/apple/check.sh DIR (a folder of iPhoneOS*.sdk and MacOSX*.sdk)"
  fail "no SDK folder given"
  finish
fi
clang=${APPLE_CLANG:-clang}
nm=${APPLE_NM:-llvm-nm}
command -v "$clang" >/dev/null || { fail "no clang (the Swift toolchain's serves)"; finish; }
command -v "$nm" >/dev/null || nm=$(dirname "$(command -v "$clang")")/llvm-nm

# ld64.lld from Debian's lld-19, unpacked (the Swift toolchain's ld64.lld
# refuses Apple platforms).
lld_root=build/apple-lld
ld64=$lld_root/usr/lib/llvm-19/bin/ld64.lld
if [ ! -x "$ld64" ]; then
  mkdir -p "$lld_root/debs"
  (cd "$lld_root/debs" && apt-get download lld-19 liblld-19 libllvm19 >/dev/null 2>&1) ||
    { apt-get update -qq >/dev/null 2>&1; (cd "$lld_root/debs" && apt-get download lld-19 liblld-19 libllvm19 >/dev/null 2>&1); }
  for deb in "$lld_root"/debs/*.deb; do dpkg -x "$deb" "$lld_root"; done
fi
lld_libs=$lld_root/usr/lib/x86_64-linux-gnu:$lld_root/usr/lib/llvm-19/lib
[ -x "$ld64" ] || { fail "could not unpack lld-19 into $lld_root (apt-get download lld-19 liblld-19 libllvm19)"; finish; }

out=build/apple-check
rm -rf "$out"
mkdir -p "$out"
shopt -s nullglob
sdks=("$sdks_dir"/iPhoneOS*.sdk "$sdks_dir"/MacOSX*.sdk)
[ ${#sdks[@]} -gt 0 ] || { fail "no iPhoneOS*.sdk or MacOSX*.sdk in $sdks_dir"; finish; }

# compile SDK TARGET OBJDIR [FLAGS...]: every ext/*.c and app.c, as SwiftPM
# does (-DSQLITE_CORE) unless FLAGS say otherwise; any diagnostic fails.
compile() {
  local sdk=$1 target=$2 objdir=$3 src diagnostics status=0
  shift 3
  [ $# -gt 0 ] || set -- -DSQLITE_CORE
  mkdir -p "$objdir"
  for src in ext/*.c Tests/apple/app.c; do
    diagnostics=$("$clang" -target "$target" -isysroot "$sdk" "$@" -Iext/include \
      -Wall -Wextra -O2 -c "$src" -o "$objdir/$(basename "$src" .c).o" 2>&1) || status=1
    if [ -n "$diagnostics" ]; then echo "$diagnostics" | head -n 20; status=1; fi
  done
  return $status
}

# The loadable library on macOS (make on a Mac): Apple's SQLite cannot load
# extensions, so against the SDK's headers alone the build must stop with
# our #error naming the remedy, and the Makefile must refuse without a
# SQLite that can (SQLITE_PREFIX, Homebrew's by default).  With one, the
# library compiles as the Makefile compiles it; this machine's own
# sqlite3.h and sqlite3ext.h stand in for Homebrew's.
check_macos_loadable() {
  local sdk=$1 target=$2 name=$3 objdir=$out/$3/$2-loadable prefix=$out/sqlite-prefix diagnostics
  diagnostics=$("$clang" -target "$target" -isysroot "$sdk" -Iext/include -fsyntax-only ext/change_capture.c 2>&1)
  if echo "$diagnostics" | grep -q "cannot load extensions (Apple's SDK): build the loadable library against one that can"; then
    pass "$name: a loadable build against Apple's headers stops, naming the remedy ($target)"
  else
    echo "$diagnostics" | head -n 5
    fail "$name: a loadable build against Apple's headers stops, naming the remedy ($target)"
  fi
  mkdir -p "$prefix/include"
  cp /usr/include/sqlite3.h /usr/include/sqlite3ext.h "$prefix/include/"
  if compile "$sdk" "$target" "$objdir" -fPIC -fvisibility=hidden -I"$prefix/include"; then
    pass "$name: the loadable library compiles for $target against a SQLite that loads extensions"
  else
    fail "$name: the loadable library compiles for $target against a SQLite that loads extensions"
  fi
}
if make --no-print-directory UNAME_S=Darwin SQLITE_PREFIX= BUILD="$out/make-darwin" \
     "$out/make-darwin/libsqlitetriggers.so" 2>&1 | grep -q "brew install sqlite"; then
  pass "make on macOS without SQLITE_PREFIX or Homebrew's SQLite refuses, naming brew install sqlite"
else
  fail "make on macOS without SQLITE_PREFIX or Homebrew's SQLite refuses, naming brew install sqlite"
fi

for sdk in "${sdks[@]}"; do
  name=$(basename "$sdk" .sdk)
  version=$(sed -n 's/^#define SQLITE_VERSION  *"\(.*\)"/\1/p' "$sdk/usr/include/sqlite3.h" 2>/dev/null)
  echo "== $name (SQLite ${version:-?})"
  case $name in
    iPhoneOS*) platform=ios; targets="arm64-apple-ios16.0"; minimum=16.0 ;;
    MacOSX*)   platform=macos; targets="arm64-apple-macos13.0 x86_64-apple-macos13.0"; minimum=13.0 ;;
  esac
  sdk_version=${name#iPhoneOS}; sdk_version=${sdk_version#MacOSX}
  for target in $targets; do
    objdir=$out/$name/$target
    if ! compile "$sdk" "$target" "$objdir"; then
      fail "$name: ext/ compiles for $target without a diagnostic"
      continue
    fi
    pass "$name: ext/ compiles for $target without a diagnostic"
    [ "$platform" = macos ] && check_macos_loadable "$sdk" "$target" "$name"
    if [ ! -e "$sdk/usr/lib/libSystem.tbd" ] || [ ! -e "$sdk/usr/lib/libsqlite3.tbd" ]; then
      echo "     $name has no libSystem.tbd or libsqlite3.tbd: compiled, not linked"
      continue
    fi
    arch=${target%%-*}
    if ! LD_LIBRARY_PATH=$lld_libs "$ld64" -arch "$arch" -platform_version "$platform" "$minimum" "$sdk_version" \
         -syslibroot "$sdk" -lSystem -lsqlite3 -o "$objdir/app" "$objdir"/*.o >"$objdir/link.log" 2>&1 ||
       [ -s "$objdir/link.log" ]; then
      head -n 20 "$objdir/link.log"
      fail "$name: the app links for $target with no undefined symbol and no warning"
      continue
    fi
    pass "$name: the app links for $target with no undefined symbol and no warning"
    # llvm-nm -m: "(undefined) weak external _sqlite3_preupdate_hook (from libsqlite3)"
    if "$nm" -m "$objdir/app" | grep -E 'undefined.*weak external _sqlite3_preupdate_hook' >/dev/null; then
      pass "$name: sqlite3_preupdate_hook is a weak import"
    else
      "$nm" -m "$objdir/app" | grep preupdate_hook
      fail "$name: sqlite3_preupdate_hook is a weak import"
    fi
    # The durable log's wake-ups (ext/log_wakeup.c) through libnotify.
    if [ "$("$nm" -m "$objdir/app" | grep -cE '_notify_(post|register_file_descriptor|cancel) \(from libSystem\)')" = 3 ]; then
      pass "$name: the wake-ups link libnotify from libSystem"
    else
      fail "$name: the wake-ups link libnotify from libSystem"
    fi
  done
done
finish
