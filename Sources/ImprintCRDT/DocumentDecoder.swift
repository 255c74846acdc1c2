import Foundation

/// Reads `Decodable` values out of a document: the counterpart of ``DocumentEncoder``.
///
/// Maps decode as structs or `[String: T]`, lists as arrays, text objects as `String` or
/// ``CollaborativeText``, counters as integers or ``Counter``, timestamps as `Date` (or
/// integers), bytes as `Data`. A missing key decodes as `nil` for an optional and throws
/// `DecodingError.keyNotFound` otherwise; a value of the wrong kind throws
/// `DecodingError.typeMismatch` naming the path and what was found, never a crash.
///
/// ```swift
/// let note = try DocumentDecoder().decode(Note.self, from: doc)
/// ```
public struct DocumentDecoder: Sendable {
    public init() {}

    /// Decodes `type` from map `obj` (the root by default) as the document holds it now.
    public func decode<T: Decodable>(_ type: T.Type, from document: Document, at obj: ObjectID = .root) throws -> T {
        let node = try DocumentNode.read(.object(obj, try document.objectType(obj)), in: document)
        return try NodeDecoder(node: node, codingPath: []).decodeAny(type)
    }
}

/// Decodes from one node.
struct NodeDecoder: Decoder {
    let node: DocumentNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(node.kind)"))
    }

    /// Decodes any value, with the special types first.
    func decodeAny<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is CollaborativeText.Type:
            switch node {
            case .text(let text), .scalar(.string(let text)): return CollaborativeText(text) as! T
            default: throw mismatch(type, "text")
            }
        case is Counter.Type:
            guard case .scalar(let scalar) = node, let value = scalar.integer else { throw mismatch(type, "a counter") }
            return Counter(value) as! T
        case is Date.Type:
            switch node {
            case .scalar(.timestamp(let ms)), .scalar(.int(let ms)): return Date(timeIntervalSince1970: Double(ms) / 1000) as! T
            case .scalar(.double(let seconds)): return Date(timeIntervalSince1970: seconds) as! T
            default: throw mismatch(type, "a timestamp")
            }
        case is Data.Type:
            guard case .scalar(.bytes(let bytes)) = node else { throw mismatch(type, "bytes") }
            return Data(bytes) as! T
        case is [UInt8].Type:
            if case .scalar(.bytes(let bytes)) = node { return bytes as! T }
            return try T(from: self)
        case is URL.Type:
            guard case .scalar(.string(let text)) = node, let url = URL(string: text) else { throw mismatch(type, "a URL string") }
            return url as! T
        default:
            return try T(from: self)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .map(let entries) = node else { throw mismatch([String: Any].self, "a map") }
        var byKey: [String: DocumentNode] = [:]
        for entry in entries { byKey[entry.key] = entry.value }
        return KeyedDecodingContainer(KeyedNodeContainer<Key>(decoder: self, entries: byKey, keyOrder: entries.map(\.key)))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .list(let items) = node else { throw mismatch([Any].self, "a list") }
        return UnkeyedNodeContainer(decoder: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleNodeContainer(decoder: self) }

    struct KeyedNodeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: NodeDecoder
        let entries: [String: DocumentNode]
        let keyOrder: [String]
        var codingPath: [any CodingKey] { decoder.codingPath }
        var allKeys: [Key] { keyOrder.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

        private func child(_ key: Key) throws -> NodeDecoder {
            guard let node = entries[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no key \"\(key.stringValue)\""))
            }
            return NodeDecoder(node: node, codingPath: codingPath + [key])
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            guard let node = entries[key.stringValue] else { return true }
            return node == .scalar(.null)
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).decodeAny(type) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try child(key).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try child(key).unkeyedContainer() }
        func superDecoder() throws -> any Decoder { try child(Key(stringValue: "super")!) }
        func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
    }

    struct UnkeyedNodeContainer: UnkeyedDecodingContainer {
        let decoder: NodeDecoder
        let items: [DocumentNode]
        var currentIndex = 0
        var codingPath: [any CodingKey] { decoder.codingPath }
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        init(decoder: NodeDecoder, items: [DocumentNode]) {
            self.decoder = decoder
            self.items = items
        }

        private mutating func next(_ type: Any.Type) throws -> NodeDecoder {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "the list has \(items.count) elements"))
            }
            defer { currentIndex += 1 }
            return NodeDecoder(node: items[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)])
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, items[currentIndex] == .scalar(.null) else { return false }
            currentIndex += 1
            return true
        }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decodeAny(type) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try next([String: Any].self).container(keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next([Any].self).unkeyedContainer() }
        mutating func superDecoder() throws -> any Decoder { try next(Any.self) }
    }

    struct SingleNodeContainer: SingleValueDecodingContainer {
        let decoder: NodeDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        private var node: DocumentNode { decoder.node }

        func decodeNil() -> Bool { node == .scalar(.null) }

        func decode(_ type: Bool.Type) throws -> Bool {
            guard case .scalar(.bool(let value)) = node else { throw decoder.mismatch(type, "a boolean") }
            return value
        }

        func decode(_ type: String.Type) throws -> String {
            switch node {
            case .scalar(.string(let text)), .text(let text): return text
            default: throw decoder.mismatch(type, "a string or text")
            }
        }

        func decode(_ type: Double.Type) throws -> Double {
            guard case .scalar(let scalar) = node else { throw decoder.mismatch(type, "a number") }
            switch scalar {
            case .double(let d): return d
            case .int(let i), .counter(let i), .timestamp(let i): return Double(i)
            case .uint(let u): return Double(u)
            default: throw decoder.mismatch(type, "a number")
            }
        }

        func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

        private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
            guard case .scalar(let scalar) = node else { throw decoder.mismatch(type, "an integer") }
            let exact: I?
            switch scalar {
            case .int(let i), .counter(let i), .timestamp(let i): exact = I(exactly: i)
            case .uint(let u): exact = I(exactly: u)
            case .double(let d): exact = d.isFinite ? I(exactly: d) : nil
            default: throw decoder.mismatch(type, "an integer")
            }
            guard let exact else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(scalar) does not fit in \(type)"))
            }
            return exact
        }

        func decode(_ type: Int.Type) throws -> Int { try integer(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeAny(type) }
    }
}

extension ScalarValue {
    /// An integer-like scalar's value (int, counter, timestamp, or a uint that fits).
    var integer: Int64? {
        switch self {
        case .int(let i), .counter(let i), .timestamp(let i): i
        case .uint(let u): Int64(exactly: u)
        default: nil
        }
    }
}
