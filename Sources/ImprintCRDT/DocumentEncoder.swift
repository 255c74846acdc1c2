import Foundation

/// Writes `Encodable` values into a document's maps, lists, text, counters and scalars, in
/// place: fields that did not change cost nothing, a changed scalar is one op, a changed
/// ``CollaborativeText`` is the splices of a minimal diff, a changed ``Counter`` one
/// increment; keys that are gone (a `nil` optional, a removed dictionary entry) are deleted.
///
/// Structs and dictionaries with `String` keys become maps, arrays become lists (updated
/// element by element), `String` a string scalar, `CollaborativeText` a text object,
/// `Counter` a counter, `Date` a timestamp (milliseconds), `Data` bytes, integers and
/// floating-point numbers numbers. The whole value is encoded before the document is
/// touched, so an encoding error leaves the document as it was.
///
/// ```swift
/// struct Note: Codable { var title: String; var body: CollaborativeText; var tags: [String] }
/// let doc = Document()
/// try DocumentEncoder().encode(Note(title: "Plan", body: "Hello", tags: ["a"]), into: doc)
/// var note = try DocumentDecoder().decode(Note.self, from: doc)
/// note.body.text += " world"
/// try DocumentEncoder().encode(note, into: doc)   // one splice: " world"
/// ```
public struct DocumentEncoder: Sendable {
    public init() {}

    /// Writes `value` (which must encode as a keyed container: a struct, class or
    /// `[String: T]`) into map `obj` (the root by default), as one change.
    public func encode<T: Encodable>(_ value: T, into document: Document, at obj: ObjectID = .root, message: String? = nil) throws {
        let node = try node(of: value)
        try document.change(message: message) { tx in try write(node, into: obj, in: tx) }
    }

    /// The same inside a transaction of the caller's, so it joins the caller's other edits.
    public func encode<T: Encodable>(_ value: T, into obj: ObjectID = .root, in tx: Transaction) throws {
        try write(try node(of: value), into: obj, in: tx)
    }

    func node<T: Encodable>(of value: T) throws -> DocumentNode {
        let encoder = NodeEncoder(codingPath: [])
        try encoder.encodeAny(value)
        return encoder.result()
    }

    private func write(_ node: DocumentNode, into obj: ObjectID, in tx: Transaction) throws {
        guard case .map(let entries) = node else {
            throw EncodingError.invalidValue(node, .init(codingPath: [], debugDescription: "a document is written from a keyed value (a struct or [String: T]), not a \(node.kind)"))
        }
        guard try tx.document.objectType(obj) == .map else {
            throw CRDTError(.wrongObjectType, "\(obj) is a \(try tx.document.objectType(obj)), not a map")
        }
        try DocumentNode.write(entries, toMap: obj, in: tx)
    }
}

/// One level of encoding: holds what its value encoded as (a scalar, or a container that
/// nested encoders fill).
final class NodeEncoder: Encoder {
    final class MapBox { var entries: [(key: String, value: NodeEncoder)] = [] }
    final class ListBox { var items: [NodeEncoder] = [] }
    enum Content {
        case empty
        case node(DocumentNode)
        case map(MapBox)
        case list(ListBox)
    }

    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var content = Content.empty

    init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

    func result() -> DocumentNode {
        switch content {
        case .empty: .scalar(.null)
        case .node(let node): node
        case .map(let box): .map(box.entries.map { ($0.key, $0.value.result()) })
        case .list(let box): .list(box.items.map { $0.result() })
        }
    }

    /// Encodes any value, with the special types first.
    func encodeAny<T: Encodable>(_ value: T) throws {
        switch value {
        case let text as CollaborativeText: content = .node(.text(text.text))
        case let counter as Counter: content = .node(.scalar(.counter(counter.value)))
        case let date as Date: content = .node(.scalar(.timestamp(Int64((date.timeIntervalSince1970 * 1000).rounded()))))
        case let data as Data: content = .node(.scalar(.bytes(Array(data))))
        // A type check, not a value cast: an empty array of anything casts to [UInt8].
        case let bytes as [UInt8] where T.self == [UInt8].self: content = .node(.scalar(.bytes(bytes)))
        case let url as URL: content = .node(.scalar(.string(url.absoluteString)))
        default: try value.encode(to: self)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: MapBox
        if case .map(let existing) = content { box = existing } else { box = MapBox(); content = .map(box) }
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(encoder: self, box: box))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: ListBox
        if case .list(let existing) = content { box = existing } else { box = ListBox(); content = .list(box) }
        return UnkeyedNodeContainer(encoder: self, box: box)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleNodeContainer(encoder: self) }

    struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: NodeEncoder
        let box: MapBox
        var codingPath: [any CodingKey] { encoder.codingPath }

        private func child(_ key: Key) -> NodeEncoder {
            let child = NodeEncoder(codingPath: codingPath + [key])
            box.entries.removeAll { $0.key == key.stringValue }
            box.entries.append((key.stringValue, child))
            return child
        }

        mutating func encodeNil(forKey key: Key) throws { child(key).content = .node(.scalar(.null)) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try child(key).encodeAny(value) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            child(key).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { child(key).unkeyedContainer() }
        mutating func superEncoder() -> any Encoder { child(Key(stringValue: "super")!) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { child(key) }
    }

    struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
        let encoder: NodeEncoder
        let box: ListBox
        var codingPath: [any CodingKey] { encoder.codingPath }
        var count: Int { box.items.count }

        private func child() -> NodeEncoder {
            let child = NodeEncoder(codingPath: codingPath + [IndexKey(box.items.count)])
            box.items.append(child)
            return child
        }

        mutating func encodeNil() throws { child().content = .node(.scalar(.null)) }
        mutating func encode<T: Encodable>(_ value: T) throws { try child().encodeAny(value) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            child().container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { child().unkeyedContainer() }
        mutating func superEncoder() -> any Encoder { child() }
    }

    struct SingleNodeContainer: SingleValueEncodingContainer {
        let encoder: NodeEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        private func set(_ scalar: ScalarValue) { encoder.content = .node(.scalar(scalar)) }

        mutating func encodeNil() throws { set(.null) }
        mutating func encode(_ value: Bool) throws { set(.bool(value)) }
        mutating func encode(_ value: String) throws { set(.string(value)) }
        mutating func encode(_ value: Double) throws { set(.double(value)) }
        mutating func encode(_ value: Float) throws { set(.double(Double(value))) }
        mutating func encode(_ value: Int) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int8) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int16) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int32) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int64) throws { set(.int(value)) }
        mutating func encode(_ value: UInt) throws { set(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt8) throws { set(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt16) throws { set(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt32) throws { set(.uint(UInt64(value))) }
        mutating func encode(_ value: UInt64) throws { set(.uint(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeAny(value) }
    }
}

/// The coding key of a list element.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { guard let i = Int(stringValue) else { return nil }; intValue = i }
    init?(intValue: Int) { self.intValue = intValue }
}
