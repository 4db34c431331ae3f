# The README's architecture section and the tree agree: every path it names
# exists, and every C source, header and Swift feature folder is named.

section=$(awk '/^## Architecture/{on=1; next} /^## /{on=0} on' README.md)
named=$(grep -oE '`(ext|Sources|Tests)/[^`]*`' <<<"$section" | tr -d '`' | sort -u)
missing=$(for path in $named; do [ -e "$path" ] || echo "$path"; done)
check_same "every path the README's architecture section names exists" "$missing" ""

unnamed=$(for path in ext/*.c ext/*.h ext/include/*.h; do
  grep -qF "\`$path\`" <<<"$section" || echo "$path"
done
for folder in Sources/SQLiteTriggers/*/ Sources/SQLiteTriggersGRDB/*/; do
  name=$(basename "$folder")
  [ "$name" = Documentation.docc ] && continue
  grep -qF "\`$name/\`" <<<"$section" || echo "$folder"
done)
check_same "the README's architecture section names every C file and Swift feature folder" "$unnamed" ""

# The README is a front page: short, and every feature's depth is a DocC
# article it links to, each link resolving.
check_same "the README is a front page of at most 420 lines" "$(( $(wc -l < README.md) <= 420 ))" "1"
links=$(grep -oE '\]\((Sources|ext|Tests)/[^)#]*' README.md | sed 's/^](//' | sort -u)
broken=$(for path in $links; do [ -e "$path" ] || echo "$path"; done)
check_same "every file the README links to exists" "$broken" ""
unlinked=$(for article in Sources/*/Documentation.docc/*.md; do
  grep -qF "]($article" README.md || echo "$article"
done)
check_same "the README links every DocC article" "$unlinked" ""
