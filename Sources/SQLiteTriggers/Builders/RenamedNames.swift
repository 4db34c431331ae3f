// Names of earlier versions that StructuredQueries does not declare: using
// one, the compiler names the new one. The other old names (`Table`,
// `Column`, `TableColumn`, `Select`, `TemporaryTrigger`, `Case`, …) are
// StructuredQueries' own, so they are gone without an alias; the CHANGELOG
// lists them all, to be renamed at once.

@available(*, unavailable, renamed: "AnyColumnDescription")
public typealias AnyTableColumn = AnyColumnDescription

@available(*, unavailable, renamed: "SQLCaseWhen")
public typealias CaseWhen<Base, Result> = SQLCaseWhen<Base, Result>
