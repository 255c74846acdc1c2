/// A strictly parsed query string: percent-decoding must succeed, only the method's
/// declared keys are allowed, and single-valued keys may appear once.
package struct QueryParameters: Sendable {
    private(set) var values: [String: [String]] = [:]

    static let maxLength = 16 * 1024

    package init(query: String, allowed: Set<String>) throws {
        guard query.utf8.count <= Self.maxLength else { throw DeliveryError.invalidRequest("query string too long") }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = Self.decode(parts[0]) else { throw DeliveryError.invalidRequest("malformed query string") }
            guard let value = Self.decode(parts.count == 2 ? parts[1] : "") else {
                throw DeliveryError.invalidRequest("malformed query string")
            }
            guard allowed.contains(key) else {
                throw DeliveryError.invalidRequest("unknown parameter \(Self.printable(key))")
            }
            values[key, default: []].append(value)
        }
    }

    /// Percent-decoding (with `+` as space) that fails on malformed escapes or invalid UTF-8.
    static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }.prefix(64).map(Character.init))
    }

    package func single(_ key: String) throws -> String? {
        guard let all = values[key] else { return nil }
        guard all.count == 1 else { throw DeliveryError.invalidRequest("\(key) given more than once") }
        return all[0]
    }

    package func required(_ key: String) throws -> String {
        guard let value = try single(key) else { throw DeliveryError.invalidRequest("missing \(key)") }
        return value
    }

    package func integer(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try single(key) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw DeliveryError.invalidRequest("\(key) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    package func all(_ key: String) -> [String] { values[key] ?? [] }
}
