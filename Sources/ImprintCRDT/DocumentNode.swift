/// A document value in the shape the Codable bridge works with: what a ``DocumentEncoder``
/// produces from a Swift value before touching the document, and what a ``DocumentDecoder``
/// reads a document subtree into before building a Swift value.
indirect enum DocumentNode: Equatable {
    case scalar(ScalarValue)
    case map([(key: String, value: DocumentNode)])
    case list([DocumentNode])
    case text(String)

    static func == (lhs: DocumentNode, rhs: DocumentNode) -> Bool {
        switch (lhs, rhs) {
        case let (.scalar(a), .scalar(b)): a == b
        case let (.map(a), .map(b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case let (.list(a), .list(b)): a == b
        case let (.text(a), .text(b)): a == b
        default: false
        }
    }

    /// The object type this node is stored as (nil: a scalar).
    var objectType: ObjectType? {
        switch self {
        case .scalar: nil
        case .map: .map
        case .list: .list
        case .text: .text
        }
    }

    var kind: String {
        switch self {
        case .scalar(let s): "scalar \(s)"
        case .map: "map"
        case .list: "list"
        case .text: "text"
        }
    }

    // MARK: Reading

    /// The node of `value` as `document` holds it now.
    static func read(_ value: Value, in document: Document) throws -> DocumentNode {
        switch value {
        case .scalar(let scalar): return .scalar(scalar)
        case .object(let id, .text): return .text(try document.text(id))
        case .object(let id, .map):
            return .map(try document.keys(id).map { key in (key, try read(try document.get(id, key) ?? .scalar(.null), in: document)) })
        case .object(let id, .list):
            return .list(try (0..<document.length(id)).map { try read(try document.get(id, at: $0) ?? .scalar(.null), in: document) })
        }
    }

    // MARK: Writing in place

    /// Makes map `obj` hold exactly the entries of `entries`, writing only what differs:
    /// equal scalars are left alone, objects of the same type are updated in place (text by
    /// a minimal diff, counters by an increment), keys that are gone are deleted.
    static func write(_ entries: [(key: String, value: DocumentNode)], toMap obj: ObjectID, in tx: Transaction) throws {
        let document = tx.document
        var wanted = Set<String>()
        for (key, node) in entries {
            wanted.insert(key)
            try set(current: try document.get(obj, key), to: node, in: tx,
                    increment: { try tx.increment(obj, key, by: $0) }, write: { try tx.put(obj, key, $0) })
        }
        for key in try document.keys(obj) where !wanted.contains(key) { try tx.delete(obj, key) }
    }

    /// Makes list `obj` hold exactly `items`, element by element in place; extra elements
    /// are appended, missing ones deleted from the end.
    static func write(_ items: [DocumentNode], toList obj: ObjectID, in tx: Transaction) throws {
        let document = tx.document
        let existing = try document.length(obj)
        for (index, node) in items.enumerated() {
            if index < existing {
                try set(current: try document.get(obj, at: index), to: node, in: tx,
                        increment: { try tx.increment(obj, at: index, by: $0) }, write: { try tx.put(obj, at: index, $0) })
            } else {
                try set(current: nil, to: node, in: tx, increment: { _ in }, write: { try tx.insert(obj, at: index, $0) })
            }
        }
        if existing > items.count { try tx.delete(obj, at: items.count, count: existing - items.count) }
    }

    /// Makes one map entry or list element, now `current`, hold `node`: a counter by
    /// `increment` (the difference), an equal scalar or an object of the same type in place,
    /// anything else by `write`-ing a new value (and filling it when it is an object).
    private static func set(current: Value?, to node: DocumentNode, in tx: Transaction,
                            increment: (Int64) throws -> Void, write: (NewValue) throws -> ObjectID?) throws {
        if case .scalar(.counter(let was))? = current, case .scalar(.counter(let now)) = node {
            if now != was { try increment(now &- was) }
            return
        }
        if let current, try update(current, to: node, in: tx) { return }
        switch node {
        case .scalar(let scalar): _ = try write(.scalar(scalar))
        case .map, .list, .text: try fill(try write(.object(node.objectType!))!, with: node, in: tx)
        }
    }

    /// Updates `current` in place to `node` when it can (same object type, equal scalar, or a
    /// counter to increment); returns false when the value must be replaced.
    private static func update(_ current: Value, to node: DocumentNode, in tx: Transaction) throws -> Bool {
        switch (current, node) {
        case let (.scalar(a), .scalar(b)):
            return a == b
        case let (.object(id, .map), .map(entries)):
            try write(entries, toMap: id, in: tx)
            return true
        case let (.object(id, .list), .list(items)):
            try write(items, toList: id, in: tx)
            return true
        case let (.object(id, .text), .text(text)):
            let diff = TextDiff(from: try tx.document.text(id), to: text)
            for splice in diff.splices.reversed() {
                try tx.splice(id, at: splice.position, delete: splice.deleteCount, insert: splice.insert)
            }
            return true
        default:
            return false
        }
    }

    /// Fills a new, empty object with `node`'s content.
    private static func fill(_ obj: ObjectID, with node: DocumentNode, in tx: Transaction) throws {
        switch node {
        case .map(let entries): try write(entries, toMap: obj, in: tx)
        case .list(let items): try write(items, toList: obj, in: tx)
        case .text(let text): if !text.isEmpty { try tx.splice(obj, at: 0, insert: text) }
        case .scalar: break
        }
    }
}
