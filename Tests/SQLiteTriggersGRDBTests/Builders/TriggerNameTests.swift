@testable import SQLiteTriggers
import Testing

/// Derived trigger names hash the definition's tokens, so the layout of
/// the printed SQL never renames a trigger.
@Suite struct TriggerNameTests {
    @Test func layoutDoesNotChangeTheHashButMeaningDoes() {
        let printed = """
            AFTER INSERT ON "main"."notes"
            FOR EACH ROW
            BEGIN
              INSERT INTO "notes" ("text")
              VALUES ('a  b');
            END
            """
        let onOneLine = #"AFTER INSERT ON "main"."notes" FOR EACH ROW BEGIN INSERT INTO "notes" ("text") VALUES ('a  b'); END"#
        let withComment = "/* reformatted */ " + onOneLine.replacingOccurrences(of: " (", with: "(")
        #expect(stableHash(canonicalTokens(printed)) == stableHash(canonicalTokens(onOneLine)))
        #expect(stableHash(canonicalTokens(printed)) == stableHash(canonicalTokens(withComment)))
        let otherValue = onOneLine.replacingOccurrences(of: "'a  b'", with: "'a b'")
        #expect(stableHash(canonicalTokens(printed)) != stableHash(canonicalTokens(otherValue)), "spaces inside a string are meaning")
    }
}
