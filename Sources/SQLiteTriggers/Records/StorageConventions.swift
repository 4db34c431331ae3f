internal import CSQLiteTriggers
import Foundation

/// The one storage format for UUIDs and dates, shared with the SQL
/// functions: UUIDs as lowercase canonical text (what `uuid()` and
/// `uuidv7()` return), dates as `'YYYY-MM-DD HH:MM:SS.SSS'` UTC (what
/// `datetime_subsec()` returns, and what GRDB writes by default).
///
/// ```swift
/// StorageConventions.text(for: UUID())  // "6f1c...-..." in lowercase
/// StorageConventions.text(for: Date(timeIntervalSince1970: 1.5))  // "1970-01-01 00:00:01.500"
/// StorageConventions.date(fromText: "2024-02-29 23:59:59.999")    // a Date
/// ```
public enum StorageConventions {
    /// A new version 7 UUID, in the same process-wide order as SQL's
    /// `uuidv7()` (on connections whose clock is not pinned): a record's key
    /// made in Swift sorts with the keys SQL defaults make, where
    /// Foundation's `UUID()` is a random version 4.
    ///
    /// ```swift
    /// let id = StorageConventions.newUUIDv7()   // then: Reminder(id: id, ...)
    /// ```
    public static func newUUIDv7() -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let rc = withUnsafeMutableBytes(of: &bytes) { buffer in
            sqlitetriggers_uuidv7(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        precondition(rc == 0, "SQLiteTriggers: the system clock is before 1970, which a version 7 UUID cannot hold")
        return UUID(uuid: bytes)
    }

    /// The lowercase canonical text of a UUID.
    public static func text(for uuid: UUID) -> String {
        uuid.uuidString.lowercased()
    }

    /// `'YYYY-MM-DD HH:MM:SS.SSS'` in UTC, to the nearest millisecond (so
    /// that text read back as a `Date` prints as the same text).
    public static func text(for date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var days = millis >= 0 ? millis / 86_400_000 : (millis - 86_399_999) / 86_400_000
        let msOfDay = Int(millis - days * 86_400_000)
        days += 719_468                               // from 0000-03-01
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = Int(days - era * 146_097)
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + Int(era) * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(year < 0 ? "-" : "")\(pad(abs(year), 4))-\(pad(month, 2))-\(pad(day, 2)) "
            + "\(pad(msOfDay / 3_600_000, 2)):\(pad(msOfDay / 60000 % 60, 2)):"
            + "\(pad(msOfDay / 1000 % 60, 2)).\(pad(msOfDay % 1000, 3))"
    }

    /// Parses `'YYYY-MM-DD HH:MM:SS.SSS'` UTC, also with fewer fraction
    /// digits, no fraction, no time, a `T` separator, or a year before 0000
    /// as `-YYYY` (as SQLite prints it); nil otherwise.
    public static func date(fromText text: String) -> Date? {
        var text = text
        return text.withUTF8 { date(fromUTF8: $0) }
    }

    static func date(fromUTF8 utf8: UnsafeBufferPointer<UInt8>) -> Date? {
        var digits = utf8[...]
        let isBeforeYearZero = digits.first == 45
        if isBeforeYearZero { digits = digits.dropFirst() }
        let start = digits.startIndex
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= digits.count else { return nil }
            var value = 0
            for index in range {
                let byte = digits[start + index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard digits.count >= 10, digits[start + 4] == 45, digits[start + 7] == 45,
              let unsignedYear = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let year = isBeforeYearZero ? -unsignedYear : unsignedYear
        var millis = 0
        if digits.count > 10 {
            guard digits.count >= 19, digits[start + 10] == 32 || digits[start + 10] == 84,
                  digits[start + 13] == 58, digits[start + 16] == 58,
                  let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
                  hour < 24, minute < 60, second < 60
            else { return nil }
            millis = ((hour * 60 + minute) * 60 + second) * 1000
            if digits.count > 19 {
                guard digits[start + 19] == 46, digits.count > 20, digits.count <= 29,
                      number(20..<digits.count) != nil
                else { return nil }
                // The first three fraction digits, zeros after short ones.
                var fraction = 0
                for offset in 20..<23 {
                    fraction = fraction * 10 + (offset < digits.count ? Int(digits[start + offset] - 48) : 0)
                }
                millis += fraction
            }
        }
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        // Summed as Foundation's Gregorian calendar sums them (days since
        // 2001-01-01 in seconds, plus the time of day with its fraction), so
        // the Date is equal (==) to GRDB's for the same text, which goes
        // through that calendar. (Before the 1582 reform that calendar is
        // Julian and GRDB's dates differ; ours stay proleptic, as SQLite's.)
        let daysSinceReference = Int64(days) - 11_323
        let secondsOfDay = Double(millis / 1000) + Double(millis % 1000 * 1_000_000) / 1e9
        return Date(timeIntervalSinceReferenceDate: Double(daysSinceReference * 86_400) + secondsOfDay)
    }
}
