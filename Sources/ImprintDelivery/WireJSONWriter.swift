import Foundation

/// Builds JSON text byte by byte, exactly as `WireJSON.encoder()` would write the same values:
/// compact, slashes unescaped, strings escaped as Foundation's `JSONEncoder` escapes them
/// (`\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`, other controls as `\u00xx`, everything else as
/// UTF-8). Callers write an object's members in sorted key order themselves, and leave out
/// absent optionals, as the encoder's `.sortedKeys` and synthesized `encodeIfPresent` do.
///
/// For the hot wire types (`SendMessageOutput`, `MessageEvent`), where `JSONEncoder`'s
/// generic containers, boxing and per-call setup cost more than the text itself.
public struct WireJSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    /// Whether the object being written has a member yet (a comma goes before the next).
    private var objectHasMembers = false

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        objectHasMembers = false
    }

    /// Writes `"key":` (after a comma unless it is the first member); the value follows.
    public mutating func key(_ key: StaticString) {
        if objectHasMembers { bytes.append(UInt8(ascii: ",")) }
        objectHasMembers = true
        bytes.append(UInt8(ascii: "\""))
        raw(key)
        bytes.append(contentsOf: "\":".utf8)
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        objectHasMembers = true  // the object is itself a member or element of what encloses it
    }

    public mutating func member(_ key: StaticString, _ value: String) {
        self.key(key)
        string(value)
    }

    public mutating func member(_ key: StaticString, _ value: Int) {
        self.key(key)
        integer(value)
    }

    public mutating func member(_ key: StaticString, _ value: Date) {
        self.key(key)
        date(value)
    }

    /// Punctuation and keys, verbatim (`{"epoch":`).
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func raw(_ bytes: some Sequence<UInt8>) {
        self.bytes.append(contentsOf: bytes)
    }

    public mutating func integer(_ value: some BinaryInteger) {
        // `description` of a fixed-width integer is its shortest decimal form, as JSONEncoder writes it.
        bytes.append(contentsOf: value.description.utf8)
    }

    public mutating func date(_ date: Date) {
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(date, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func appendEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0xF)])
        }
    }
}
