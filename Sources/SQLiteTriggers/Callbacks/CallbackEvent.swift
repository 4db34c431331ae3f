/// A typed callback: its name and payload in one declaration. The
/// `@CallbackEvent` macro (SQLiteTriggersMacros) writes the conformance.
///
/// ```swift
/// @CallbackEvent struct ReminderCompleted { var id: UUID; var title: String }
/// ```
public protocol CallbackEvent {
    /// The first argument of `swift_callback`.
    static var callbackName: String { get }
    /// The payload, from the arguments after the name, in field order.
    static func decode(from arguments: CallbackArguments) throws(CallbackDecodingError) -> Self
}
