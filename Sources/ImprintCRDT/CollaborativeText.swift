/// A `String` field that a ``DocumentEncoder`` stores as collaborative text (a text object,
/// edited by splices, so concurrent typing in it merges character by character) instead of a
/// scalar (where concurrent writes keep one whole value).
///
/// ```swift
/// struct Note: Codable {
///     var title: String               // a scalar: last writer wins
///     var body: CollaborativeText     // text: edits merge
/// }
/// ```
///
/// Outside a document it encodes and decodes as a plain string.
public struct CollaborativeText: Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var text: String

    public init(_ text: String) { self.text = text }
    public init(stringLiteral value: String) { self.text = value }
    public var description: String { text }

    public init(from decoder: any Decoder) throws {
        text = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

/// An integer field that a ``DocumentEncoder`` stores as a counter: a change to it is recorded
/// as an increment, so concurrent increments on several replicas add up instead of one
/// overwriting the others.
///
/// ```swift
/// struct Stats: Codable { var views: Counter }
/// ```
///
/// Outside a document it encodes and decodes as a plain integer.
public struct Counter: Hashable, Sendable, Codable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public var value: Int64

    public init(_ value: Int64) { self.value = value }
    public init(integerLiteral value: Int64) { self.value = value }
    public var description: String { "\(value)" }

    public init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
