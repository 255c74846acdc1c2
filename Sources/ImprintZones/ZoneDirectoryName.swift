/// Zone ids as directory names: reversible, collision-free, lowercase, and safe on every
/// filesystem a sync tool may carry them to (case-insensitive macOS and Windows volumes
/// included).
///
/// `a`–`z`, `0`–`9` and `-` stand for themselves; every other UTF-8 byte (uppercase letters,
/// `_`, `.`, `/`, `:`, …) becomes `_` and two lowercase hex digits. So
/// `inbox_did:key:z6Mk` is `inbox_5fdid_3akey_3az6_4dk`. The result never contains `/`, `.`
/// (so neither `..`, a hidden name nor a sync tool's temporary-name shape), uppercase letters
/// or spaces, and decoding accepts only the canonical form, so two ids never share a name.
enum ZoneDirectoryName {
    static func encode(_ zoneId: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(zoneId.utf8.count * 3)
        for byte in zoneId.utf8 {
            if isLiteral(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "_"))
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The zone id a directory name stands for, or nil for any name `encode` never makes.
    static func decode(_ name: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = name.utf8.makeIterator()
        while let byte = iterator.next() {
            if isLiteral(byte) {
                bytes.append(byte)
                continue
            }
            guard byte == UInt8(ascii: "_"), let high = iterator.next().flatMap(hexValue),
                  let low = iterator.next().flatMap(hexValue) else { return nil }
            let decoded = high << 4 | low
            guard !isLiteral(decoded) else { return nil } // not canonical
            bytes.append(decoded)
        }
        guard !bytes.isEmpty, let text = String(validating: bytes, as: UTF8.self) else { return nil }
        return text
    }

    private static func isLiteral(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-")
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
