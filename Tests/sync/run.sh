#!/usr/bin/env bash
# The sync example, run for real: two device files sync their notes through
# a PostgreSQL server (a temporary cluster under build/sync, on a Unix
# socket only, stopped at the end), with the example package's uploader
# and downloader (Tests/sync: PostgresNIO, GRDB, SQLiteTriggers), while
# each device is edited by the app, the sqlite3 shell (with and without
# the extension) and Python's sqlite3 (without it). One uploader is
# SIGKILLed in the middle of a batch. Then both devices and the server
# must be equal in every column to the last writer's version of every
# note (the writers' journals say which), with no echo and no version
# applied twice.  Prints "sync: N passed, N failed".
#   run.sh --bench N   make bench's row instead: N changes uploaded, timed
#                      (a release build)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
example=$root/Tests/sync
work=$root/build/sync
run=$work/run
library=$root/build/libsqlitetriggers
shell=${SQLITE3:-sqlite3}
passed=0 failed=0
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
as_server=()
server_started=no
finish() {
  if [ "$server_started" = yes ]; then
    "${as_server[@]}" "$pgbin/pg_ctl" -D "$run/pg/data" -m fast -w stop >/dev/null 2>&1 || fail "the server did not stop"
  fi
  echo "sync: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}
trap finish EXIT

bench=${2:-}
[ "${1:-}" = --bench ] || bench=
configuration=debug
[ -n "$bench" ] && configuration=release
rm -rf "$run" && mkdir -p "$run/journals" "$run/pg"
if (set -o pipefail; cd "$example" && swift build -c "$configuration" --scratch-path "$work/.build" 2>&1 | tail -n 3); then
  pass "the example package builds"
else
  fail "the example package does not build"; exit
fi
sync=$work/.build/$configuration/two-device-sync

# The server: initdb refuses to run as root, so as root the cluster runs as
# Debian's postgres user, in a folder of its own.
if [ ! -x "$pgbin/initdb" ]; then
  fail "no PostgreSQL server: Debian's postgresql package (Tests/prerequisites.sh installs it)"; exit
fi
if [ "$(id -u)" -eq 0 ]; then
  chown postgres: "$run/pg"
  as_server=(runuser -u postgres --)
fi
if ! "${as_server[@]}" "$pgbin/initdb" -D "$run/pg/data" -U sync --auth=trust --no-locale -E UTF8 >"$run/pg/initdb.log" 2>&1; then
  tail -n 5 "$run/pg/initdb.log"; fail "initdb failed (can the postgres user reach $run/pg?)"; exit
fi
if ! "${as_server[@]}" "$pgbin/pg_ctl" -D "$run/pg/data" -l "$run/pg/server.log" -w \
     -o "-c listen_addresses='' -c unix_socket_directories='$run/pg' -c fsync=off" start >/dev/null; then
  tail -n 5 "$run/pg/server.log"; fail "the server did not start"; exit
fi
server_started=yes
if "$pgbin/createdb" -h "$run/pg" -U sync notes && "$sync" server-setup "$run/pg"; then
  pass "a PostgreSQL $("$pgbin/postgres" --version | grep -oE '[0-9]+\.[0-9]+' | head -n 1) server on a Unix socket, its schema created"
else
  fail "the server's database could not be made"; exit
fi

A=$run/a.sqlite B=$run/b.sqlite
if [ -n "$bench" ]; then
  "$sync" bench "$A" "$run/pg" "$bench" && pass "the round trip measured" || fail "the round trip could not be measured"
  exit
fi

# shell_edits DB DEVICE WRITER EDITS SEED [--load]: the sqlite3 shell edits
# one random note per transaction (insert, edit or delete), journaling the
# version each left; with --load, the extension is loaded.
shell_edits() {
  local db=$1 device=$2 writer=$3 edits=$4 load=${6:-} i roll
  RANDOM=$5
  {
    echo ".timeout 30000"
    [ "$load" = --load ] && echo ".load $library"
    for ((i = 0; i < edits; i++)); do
      roll=$((RANDOM % 10))
      echo "BEGIN IMMEDIATE; DROP TABLE IF EXISTS temp.pick;"
      if [ "$roll" -lt 3 ]; then
        echo "CREATE TEMP TABLE pick AS SELECT lower(hex(randomblob(8))) AS id;"
        echo "INSERT INTO notes(id, title, body, editedBy) SELECT id, 'title by $writer #$i', 'body by $writer #$i', '$writer' FROM pick;"
      else
        echo "CREATE TEMP TABLE pick AS SELECT id FROM notes ORDER BY random() LIMIT 1;"
      fi
      if [ "$roll" -lt 8 ]; then
        [ "$roll" -ge 3 ] && echo "UPDATE notes SET body = 'body by $writer #$i', editedBy = '$writer' WHERE id IN pick;"
        echo "SELECT json_object('id', id, 'title', title, 'body', body, 'editedBy', editedBy, 'updatedAt', updatedAt, 'deleted', 0) FROM notes WHERE id IN pick;"
      else
        echo "DELETE FROM notes WHERE id IN pick;"
        echo "SELECT json_object('id', id, 'editedBy', '~deleted-by-$device', 'deleted', 1, 'updatedAt',"
        echo "  (SELECT time FROM sqlitetriggers_changes WHERE kind = 'delete' ORDER BY id DESC LIMIT 1)) FROM pick;"
      fi
      echo "COMMIT;"
      echo ".shell sleep 0.003"
    done
  } | "$shell" -batch -bail "$db" >>"$run/journals/$writer.jsonl"
}

# One round: the app edits both devices while the shell and Python edit
# them too; then each device uploads and downloads.
edits_round() {
  local round=$1 status=0
  "$sync" edit "$A" A A-app 25 "$((round * 10 + 1))" "$run/journals/A-app-$round.jsonl" & local app_a=$!
  "$sync" edit "$B" B B-app 25 "$((round * 10 + 2))" "$run/journals/B-app-$round.jsonl" & local app_b=$!
  shell_edits "$A" A A-shell 6 "$((round * 10 + 3))" || status=1
  python3 "$example/python_writer.py" "$B" B B-python 6 "$((round * 10 + 4))" "$run/journals/B-python-$round.jsonl" || status=1
  shell_edits "$B" B B-shell-ext 4 "$((round * 10 + 5))" --load || status=1
  wait "$app_a" || status=1
  wait "$app_b" || status=1
  return "$status"
}

sync_round() {
  "$sync" upload "$A" A "$run/pg" >/dev/null && "$sync" upload "$B" B "$run/pg" >/dev/null &&
    "$sync" download "$A" "$run/pg" >/dev/null && "$sync" download "$B" "$run/pg" >/dev/null
}

# Each device's file, migrated by the app: tables, rules, outbox.
"$sync" download "$A" "$run/pg" >/dev/null && "$sync" download "$B" "$run/pg" >/dev/null || fail "the devices could not be set up"

status=0
for round in 1 2 3; do
  edits_round "$round" || status=1
  if [ "$round" = 2 ]; then
    # An uploader killed in the middle of a batch: slow (100 ms after each
    # transaction it acknowledges), killed after its second.
    "$sync" upload "$B" B "$run/pg" 100 >"$run/killed-uploader.log" 2>&1 & killed=$!
    for _ in $(seq 1 300); do
      [ "$(grep -c '^acknowledged' "$run/killed-uploader.log")" -ge 2 ] && break
      sleep 0.02
    done
    kill -KILL "$killed"; wait "$killed" 2>/dev/null
    acknowledged=$(grep -c '^acknowledged' "$run/killed-uploader.log")
    resent=$("$sync" upload "$B" B "$run/pg" | grep -oE '^uploaded [0-9]+' | grep -oE '[0-9]+')
    if [ "$acknowledged" -ge 2 ] && [ "${resent:-0}" -gt 0 ]; then
      pass "an uploader SIGKILLed after $acknowledged transactions of its batch; the next sent the $resent left"
    else
      fail "the uploader was not killed mid-batch ($acknowledged acknowledged, ${resent:-?} sent after)"
    fi
  fi
  # Round 3 syncs while the devices are being edited.
  if [ "$round" = 3 ]; then
    edits_round 4 & editing=$!
    sync_round || status=1
    wait "$editing" || status=1
  fi
  sync_round || status=1
done
[ "$status" -eq 0 ] && pass "every writer and sync step ran (app, shell, shell with the extension, Python)" ||
  fail "a writer or a sync step failed"

# A last edit on each device, sent; each downloads the other's: uploading
# now sends nothing (an echo would send the downloads back).
"$sync" edit "$A" A A-app 3 91 "$run/journals/A-app-last.jsonl" && "$sync" edit "$B" B B-app 3 92 "$run/journals/B-app-last.jsonl" &&
  "$sync" upload "$A" A "$run/pg" >/dev/null && "$sync" upload "$B" B "$run/pg" >/dev/null || status=1
downloads=$("$sync" download "$A" "$run/pg"; "$sync" download "$B" "$run/pg")
uploads=$("$sync" upload "$A" A "$run/pg"; "$sync" upload "$B" B "$run/pg")
if [ "$(echo "$downloads" | grep -c '^downloaded [1-9]')" = 2 ] && [ "$(echo "$uploads" | grep -c '^uploaded 0 transactions')" = 2 ]; then
  pass "after downloading the other's changes, neither device has anything to upload"
else
  fail "downloads were uploaded again: $downloads; $uploads"
fi
if "$sync" check "$A" "$B" "$run/pg" "$run/journals"; then
  pass "both devices and the server hold the last writer's version of every note, in every column; no echo, nothing applied twice"
else
  fail "the devices and the server do not agree"
fi
