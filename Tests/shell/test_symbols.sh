# Only the documented API may be visible outside the C sources: an app
# links us beside C libraries we never see, and a second global named
# like one of ours would be a link error (or worse, a silent interposition).
# The objects are built as SwiftPM and `make install` build them
# (-DSQLITE_CORE), and as the loadable .so.

public_api=$(grep -v '^#' ext/include/sqlitetriggers.h | grep -oE 'SQLITETRIGGERS_API [^(]*\b[a-z0-9_]+\(' |
             grep -oE '[a-z0-9_]+\($' | tr -d '(' | sort)

objects_dir="$SCRATCH/objects"
mkdir -p "$objects_dir"
for source in ext/*.c; do
  ${CC:-cc} -c -O2 -fPIC -DSQLITE_CORE -o "$objects_dir/$(basename "$source" .c).o" "$source"
done

# Every defined global of the objects: NAME VISIBILITY.
globals=$(for object in "$objects_dir"/*.o; do
  readelf -sW "$object" | awk '$5 == "GLOBAL" && $7 != "UND" { print $8, $6 }'
done | sort -u)

unexpected=$(echo "$globals" | while read -r name visibility; do
  if echo "$public_api" | grep -qx "$name"; then
    [ "$visibility" = DEFAULT ] || echo "$name (public but $visibility)"
  elif [[ $name == sqlitetriggers_* ]]; then
    [ "$visibility" = HIDDEN ] || echo "$name (internal but $visibility)"
  else
    echo "$name (neither public nor sqlitetriggers_-prefixed)"
  fi
done)
check_same "every global of the -DSQLITE_CORE objects is public API or a hidden sqlitetriggers_ name" \
  "$unexpected" ""

check_same "the objects define every public function" \
  "$(echo "$globals" | awk '$2 == "DEFAULT" { print $1 }' | sort)" "$public_api"

check_same "the loadable library exports exactly the public API" \
  "$(nm -D --defined-only "$EXT.so" | awk '{ print $3 }' | sort)" "$public_api"
