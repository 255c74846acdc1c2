import ImprintEncoding
extension Document {
    /// The winning value at `key` of a map, or nil.
    public func get(_ obj: ObjectID, _ key: String) throws -> Value? {
        let (_, st) = try readableState(obj)
        guard case .map(let m) = st else { throw CRDTError(.wrongObjectType, "\(obj) is not a map") }
        return m.keys[key]?.winner(actorLess).map(value(of:))
    }

    /// Every concurrently written value at `key` (more than one means a conflict), winner last.
    public func conflicts(_ obj: ObjectID, _ key: String) throws -> [Value] {
        let (_, st) = try state(obj)
        guard case .map(let m) = st else { throw CRDTError(.wrongObjectType, "\(obj) is not a map") }
        return (m.keys[key]?.sorted(actorLess) ?? []).map(value(of:))
    }

    /// The element at `index` of a list.
    public func get(_ obj: ObjectID, at index: Int) throws -> Value? {
        let (_, seq) = try sequence(obj, text: false)
        guard let (_, ci) = seq.contentOffset(atVisible: index) else { return nil }
        return seq.elements[ci].winner(actorLess).map(value(of:))
    }

    /// A map's keys, sorted.
    public func keys(_ obj: ObjectID) throws -> [String] {
        let (_, st) = try readableState(obj)
        guard case .map(let m) = st else { throw CRDTError(.wrongObjectType, "\(obj) is not a map") }
        return m.keys.keys.sorted()
    }

    /// Number of keys (map), elements (list) or code points (text).
    public func length(_ obj: ObjectID) throws -> Int {
        switch try state(obj).1 {
        case .map(let m): m.keys.count
        case .sequence(let s): s.visibleCount
        }
    }

    /// The content of a text object.
    public func text(_ obj: ObjectID) throws -> String {
        // Just opened by `load`: the visible text as saved.
        if let deferred = deferredLoad, let text = deferred.texts[try internalID(obj)] { return text }
        return try sequence(obj, text: true).1.text()
    }

    /// The type of an object.
    public func objectType(_ obj: ObjectID) throws -> ObjectType { try readableState(obj).1.type }

    /// Follows a path of map keys (`String`) and list indices (`Int`) from the root.
    public func value(at path: [PathElement]) throws -> Value? {
        var current = Value.object(.root, .map)
        for p in path {
            guard case .object(let o, let t) = current else { return nil }
            let next: Value?
            switch (p, t) {
            case (.key(let k), .map): next = try get(o, k)
            case (.index(let i), .list): next = try get(o, at: i)
            default: throw CRDTError(.noSuchPath, "path element \(p) does not fit a \(t)")
            }
            guard let n = next else { return nil }
            current = n
        }
        return current
    }

    func value(of e: Register.Entry) -> Value {
        switch e.value {
        case .object(let t): return .object(publicID(e.id), t)
        case .scalar(.counter(let base)): return .scalar(.counter(base &+ e.increments))
        case .scalar(let s): return .scalar(s)
        }
    }

    /// The whole document as plain Swift values: maps become `[String: Any]`, lists `[Any]`,
    /// text `String`, scalars their natural type (`NSNull` for null).
    public func jsonValue(_ obj: ObjectID = .root) throws -> JSONValue {
        switch try state(obj).1 {
        case .map(let m):
            var out: [String: JSONValue] = [:]
            for (k, reg) in m.keys { if let w = reg.winner(actorLess) { out[k] = try jsonValue(of: value(of: w)) } }
            return .object(out)
        case .sequence(let s):
            if s.isText { return .string(s.text()) }
            var items: [JSONValue] = []
            var err: Error?
            s.forEachVisible { _, ci in
                if err == nil, let w = s.elements[ci].winner(actorLess) {
                    do { items.append(try jsonValue(of: value(of: w))) } catch { err = error }
                }
            }
            if let err { throw err }
            return .array(items)
        }
    }

    private func jsonValue(of v: Value) throws -> JSONValue {
        switch v {
        case .object(let id, _): return try jsonValue(id)
        case .scalar(let s):
            switch s {
            case .null: return .null
            case .bool(let b): return .bool(b)
            case .int(let i), .counter(let i), .timestamp(let i): return .number(Double(i))
            case .uint(let u): return .number(Double(u))
            case .double(let d): return .number(d)
            case .string(let s): return .string(s)
            case .bytes(let b): return .string(Hex.encode(b))
            }
        }
    }
}

/// One step of a path into a document.
public enum PathElement: Hashable, Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case key(String)
    case index(Int)
    public init(stringLiteral value: String) { self = .key(value) }
    public init(integerLiteral value: Int) { self = .index(value) }
}
