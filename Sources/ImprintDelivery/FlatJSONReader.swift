/// A strict reader for the small flat JSON objects on the hot path (the `sendMessage` body,
/// token claims), so the common case skips `JSONDecoder`'s generic machinery.
///
/// It accepts only a plain subset: one object of members whose values are strings of
/// printable ASCII without escapes, integers in `-?(0|[1-9][0-9]*)` form of at most 18
/// digits, or `null`; JSON white space between tokens; nothing after the object. Anything
/// else (escapes, non-ASCII, fractions, exponents, nesting, a repeated key, a BOM) is
/// refused, and the caller decodes with `JSONDecoder` instead, which also makes the errors.
/// So whatever this reader accepts, `JSONDecoder` reads to the same values.
public enum FlatJSONReader {
    public enum Value: Hashable, Sendable {
        case string(String)
        case integer(Int64)
        case null
    }

    /// Calls `member` with each key and value in order. False when the text is outside the
    /// subset or `member` returned false (the caller then falls back).
    public static func read(_ bytes: UnsafeRawBufferPointer, member: (String, Value) -> Bool) -> Bool {
        var cursor = Cursor(bytes: bytes)
        guard cursor.skipBlanks(), cursor.take(UInt8(ascii: "{")) else { return false }
        guard cursor.skipBlanks() else { return false }
        if cursor.take(UInt8(ascii: "}")) { return cursor.atEndAfterBlanks() }
        while true {
            guard let key = cursor.string(), cursor.skipBlanks(), cursor.take(UInt8(ascii: ":")), cursor.skipBlanks(),
                  let value = cursor.value(), member(key, value), cursor.skipBlanks()
            else { return false }
            if cursor.take(UInt8(ascii: ",")) {
                guard cursor.skipBlanks() else { return false }
                continue
            }
            guard cursor.take(UInt8(ascii: "}")) else { return false }
            return cursor.atEndAfterBlanks()
        }
    }

    private struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        /// Skips white space; false at the end of the input (every caller expects more).
        mutating func skipBlanks() -> Bool {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return true
                }
            }
            return false
        }

        mutating func atEndAfterBlanks() -> Bool { !skipBlanks() }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func value() -> Value? {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "n"):
                guard bytes.count - index >= 4, bytes[index + 1] == UInt8(ascii: "u"), bytes[index + 2] == UInt8(ascii: "l"),
                      bytes[index + 3] == UInt8(ascii: "l")
                else { return nil }
                index += 4
                return .null
            default: return integer().map(Value.integer)
            }
        }

        /// A string of printable ASCII other than `"` and `\`, after its opening quote.
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }

        mutating func integer() -> Int64? {
            let negative = take(UInt8(ascii: "-"))
            let start = index
            var value: Int64 = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                guard index - start < 18 else { return nil }  // 18 digits cannot overflow
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            let digits = index - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            // A fraction or exponent would follow here: refused, like any other byte but a delimiter.
            if index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "}"): break
                default: return nil
                }
            }
            return negative ? -value : value
        }
    }
}
