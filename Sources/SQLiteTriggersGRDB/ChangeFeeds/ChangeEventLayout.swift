/// The arguments of a change event, as ext/change_capture.c writes them
/// (THE EVENT FORMAT, at the top of that file) and a check's triggers fire
/// them: the kind, then one side (insert, delete) or two (update: the old
/// row, then the new), each side its rowid then a value per column.
///
/// Argument numbers count from 1 after the callback's name, as
/// swift_callback_batch's `argN` columns do (`arg1` is the kind);
/// `CallbackArguments` indexes are those numbers less one.
struct ChangeEventLayout {
    /// The values of a side: every column, or the key's alone.
    let columnCount: Int

    /// A side's arguments: its rowid, then the values.
    var sideWidth: Int { 1 + columnCount }

    /// The number of the kind's argument.
    static let kindArgument = 1

    /// How many arguments an event of `kind` has.
    func argumentCount(kind: String) -> Int { 1 + sideWidth * (kind == "update" ? 2 : 1) }

    /// The number of a side's rowid argument: the only side of an insert or
    /// a delete, and an update's old side, come first; an update's new side
    /// (`secondSide`) after it.
    func rowidArgument(secondSide: Bool) -> Int { secondSide ? 2 + sideWidth : 2 }

    /// The number of the argument holding value `index` (from 0) of a side.
    func valueArgument(_ index: Int, secondSide: Bool) -> Int { rowidArgument(secondSide: secondSide) + 1 + index }
}
