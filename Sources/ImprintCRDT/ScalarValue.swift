/// A primitive value stored in a map entry or list element.
public enum ScalarValue: Hashable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    /// Milliseconds since the Unix epoch.
    case timestamp(Int64)
    /// A counter: concurrent `increment`s add up instead of conflicting.
    case counter(Int64)

    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): "\(b)"
        case .int(let i): "\(i)"
        case .uint(let u): "\(u)u"
        case .double(let d): "\(d)"
        case .string(let s): "\"\(s)\""
        case .bytes(let b): "bytes(\(b.count))"
        case .timestamp(let t): "timestamp(\(t))"
        case .counter(let c): "counter(\(c))"
        }
    }
}

/// What a read returns: a scalar, or a nested object with its id.
public enum Value: Hashable, Sendable, CustomStringConvertible {
    case scalar(ScalarValue)
    case object(ObjectID, ObjectType)

    public var description: String {
        switch self {
        case .scalar(let s): s.description
        case .object(let id, let t): "\(t)(\(id))"
        }
    }

    /// The string, if this is a string scalar.
    public var string: String? { if case .scalar(.string(let s)) = self { s } else { nil } }
    /// The integer value of int, uint (when it fits) and counter scalars.
    public var int: Int64? {
        switch self {
        case .scalar(.int(let i)), .scalar(.counter(let i)): i
        case .scalar(.uint(let u)): Int64(exactly: u)
        default: nil
        }
    }
    /// The object id, if this is a nested object.
    public var objectID: ObjectID? { if case .object(let id, _) = self { id } else { nil } }
}

/// What a put stores: a scalar, or a new empty object of some type.
public enum NewValue: Hashable, Sendable {
    case scalar(ScalarValue)
    case object(ObjectType)
}

extension NewValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .scalar(.string(value)) }
    public init(integerLiteral value: Int64) { self = .scalar(.int(value)) }
    public init(booleanLiteral value: Bool) { self = .scalar(.bool(value)) }
    public init(floatLiteral value: Double) { self = .scalar(.double(value)) }
    public init(nilLiteral: ()) { self = .scalar(.null) }

    public static let map = NewValue.object(.map)
    public static let list = NewValue.object(.list)
    public static let text = NewValue.object(.text)
}
