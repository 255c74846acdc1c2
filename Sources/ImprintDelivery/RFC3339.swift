import Foundation

/// RFC 3339 timestamps, always written in UTC with millisecond precision.
///
/// Writing is on the `sendMessage` path twice (the response's `serverTime`, the event's
/// `sentAt`), so times from 1970 through 9999 are formatted by hand, digit by digit, to the
/// same text `Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)` makes
/// (milliseconds truncated from the reference-date interval, as Foundation does); other times
/// (Foundation switches to the Julian calendar before 1582) go through that format style.
public enum RFC3339 {
    /// `2026-11-21T09:40:00.123Z` is 24 bytes.
    static let length = 24

    public static func string(from date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the text of `date` (without quotes) to `bytes`.
    public static func append(_ date: Date, to bytes: inout [UInt8]) {
        guard let fields = Fields(date) else {
            bytes.append(contentsOf: foundationString(from: date).utf8)
            return
        }
        fields.write(to: &bytes)
    }

    /// The format style's text: the reference the fast path reproduces, and its fallback.
    static func foundationString(from date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }

    public static func date(from text: String) -> Date? {
        guard text.count <= 64 else { return nil }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
            return date
        }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// The civil UTC fields of a time in 1970...9999, or nil outside that range.
    struct Fields: Equatable {
        var year, month, day, hour, minute, second, millisecond: Int

        /// 1970-01-01 and 10000-01-01 as seconds since the reference date (2001-01-01).
        private static let firstSecond = -978_307_200.0
        private static let endSecond = 252_423_993_600.0

        init?(_ date: Date) {
            let interval = date.timeIntervalSinceReferenceDate
            guard interval >= Self.firstSecond, interval < Self.endSecond else { return nil }
            let whole = interval.rounded(.down)
            millisecond = Int((interval - whole) * 1000)
            let unix = Int(whole) + 978_307_200
            let secondOfDay = unix % 86_400
            hour = secondOfDay / 3600
            minute = secondOfDay % 3600 / 60
            second = secondOfDay % 60
            // Days to civil date (proleptic Gregorian; days >= 0 here), after Howard Hinnant's
            // `civil_from_days`.
            let shifted = unix / 86_400 + 719_468
            let era = shifted / 146_097
            let dayOfEra = shifted - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        }

        func write(to bytes: inout [UInt8]) {
            let widths = [(year, 4), (month, 2), (day, 2), (hour, 2), (minute, 2), (second, 2), (millisecond, 3)]
            for ((value, width), separator) in zip(widths, "--T::.Z".utf8) {
                Self.digits(value, width, &bytes)
                bytes.append(separator)
            }
        }

        private static func digits(_ value: Int, _ count: Int, _ bytes: inout [UInt8]) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
    }
}
