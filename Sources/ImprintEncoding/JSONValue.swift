/// Any JSON value: the one JSON type every Imprint module shares.
///
/// It serves three uses with one shape:
/// - open-ended fields kept verbatim across a rewrite (a bundle's `metadata.json` keys this
///   version does not know, the Delivery Service's `Storage.config`), through `Codable`;
/// - the JSON-shaped view of a document (`Document.jsonValue()`), for display and export;
/// - the CLI's `--json` output, through ``serialized``.
///
/// Numbers are `Double`, as in JSON itself; an integer beyond 2^53 loses precision.
///
/// ```swift
/// let value: JSONValue = .object(["title": .string("Notes"), "pages": .number(3)])
/// value.serialized // {"pages":3,"title":"Notes"}
/// ```
public enum JSONValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Compact JSON text with sorted keys (the same value always gives the same text).
    /// Integral numbers below 10^15 print without a fraction; non-finite numbers print `null`.
    public var serialized: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let d):
            if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
            return d.isFinite ? "\(d)" : "null"
        case .string(let s): return JSONValue.quote(s)
        case .array(let a): return "[" + a.map(\.serialized).joined(separator: ",") + "]"
        case .object(let o):
            return "{" + o.keys.sorted().map { JSONValue.quote($0) + ":" + o[$0]!.serialized }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                out += "\\u00"
                out.unicodeScalars.append(Unicode.Scalar(Hex.digits[Int(u.value >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(Hex.digits[Int(u.value & 0xF)]))
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
