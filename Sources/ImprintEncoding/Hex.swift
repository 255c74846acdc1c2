/// Hexadecimal: lowercase on output (the only spelling Imprint writes, in file names, metadata,
/// hashes and CLI output), either case on input.
///
/// ```swift
/// Hex.encode([0xde, 0xad])   // "dead"
/// Hex.decode("DEAD")         // [0xde, 0xad]
/// Hex.decode("dea")          // nil (odd length)
/// ```
package enum Hex {
    /// The lowercase digits, `0`–`9` then `a`–`f`, as UTF-8 bytes.
    package static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`, two digits per byte.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of lowercase or uppercase hex; nil on odd length or a non-hex character.
    /// Memory is bounded by the input: at most `text.utf8.count / 2` bytes.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let hi = value(utf8[i]), let lo = value(utf8[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// True for exactly `length` lowercase hex digits.
    package static func isLowercaseHex(_ text: some StringProtocol, length: Int) -> Bool {
        let utf8 = text.utf8
        return utf8.count == length && utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The value of one hex digit (either case), or nil.
    package static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}
