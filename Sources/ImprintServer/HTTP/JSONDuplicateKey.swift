import ImprintEncoding

/// Finds a key that appears twice in one JSON object, which `JSONDecoder` accepts and
/// resolves silently (one of the two values wins). Keys are compared after unescaping, so
/// `{"a": 1, "\u0061": 2}` repeats `a`.
///
/// One pass over the bytes with an explicit stack (no recursion, so deep nesting cannot
/// exhaust the stack); memory is bounded by the input. Malformed JSON is not judged here:
/// the scan gives up and the decoder reports it.
///
/// ```swift
/// Array(#"{"a": {"b": 1, "b": 2}}"#.utf8).withUnsafeBytes { JSONDuplicateKey.first(in: $0) }  // "b"
/// ```
enum JSONDuplicateKey {
    private enum Frame {
        case object(keys: Set<String>, expectingKey: Bool)
        case array
    }

    static func first(in bytes: UnsafeRawBufferPointer) -> String? {
        var stack: [Frame] = []
        var i = 0
        let n = bytes.count
        while i < n {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: "{"):
                stack.append(.object(keys: [], expectingKey: true))
                i += 1
            case UInt8(ascii: "["):
                stack.append(.array)
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard stack.popLast() != nil else { return nil }
                i += 1
            case UInt8(ascii: ","):
                if case .object(let keys, _)? = stack.last { stack[stack.count - 1] = .object(keys: keys, expectingKey: true) }
                i += 1
            case UInt8(ascii: "\""):
                if case .object(var keys, true)? = stack.last {
                    guard let (key, next) = readString(bytes, from: i + 1) else { return nil }
                    guard keys.insert(key).inserted else { return key }
                    stack[stack.count - 1] = .object(keys: keys, expectingKey: false)
                    i = next
                } else {
                    guard let next = skipString(bytes, from: i + 1) else { return nil }
                    i = next
                }
            default:
                i += 1
            }
        }
        return nil
    }

    /// The index after the closing quote of a string whose content starts at `start`.
    private static func skipString(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var i = start
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""): return i + 1
            default: i += 1
            }
        }
        return nil
    }

    /// The unescaped string starting at `start` and the index after its closing quote.
    private static func readString(_ bytes: UnsafeRawBufferPointer, from start: Int) -> (String, Int)? {
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        var i = start
        func flush() {
            guard !raw.isEmpty else { return }
            scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
            raw.removeAll(keepingCapacity: true)
        }
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for k in at..<at + 4 {
                guard let digit = Hex.value(bytes[k]) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                flush()
                return (String(scalars), i + 1)
            }
            guard byte == UInt8(ascii: "\\") else { raw.append(byte); i += 1; continue }
            guard i + 1 < bytes.count else { return nil }
            flush()
            let escape = bytes[i + 1]
            i += 2
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{8}")
            case UInt8(ascii: "f"): scalars.append("\u{c}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                guard var value = hex4(i) else { return nil }
                i += 4
                if (0xD800..<0xDC00).contains(value), i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u"),
                   let low = hex4(i + 2), (0xDC00..<0xE000).contains(low) {
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
            default:
                return nil
            }
        }
        return nil
    }
}
