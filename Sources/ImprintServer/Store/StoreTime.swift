import Foundation

/// Times are stored as integer milliseconds since 1970 in both stores.
package enum StoreTime {
    package static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
    package static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
