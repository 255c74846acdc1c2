import Testing
@testable import ImprintCRDT
import ImprintEncoding

/// What a UI would keep: a tree of plain nodes by object id, changed only through patches.
final class PatchModel {
    enum Node {
        case map([String: Value])
        case list([Value])
        case text([Unicode.Scalar])
    }

    var nodes: [ObjectID: Node] = [:]
    /// Map keys with several concurrent values.
    var conflicts: [ObjectID: [String: [Value]]] = [:]
    /// Each text's characters' marks (kept in step with `.text` nodes).
    var marks: [ObjectID: [[Mark]]] = [:]

    /// The view of `doc` at `heads`, read through the public API.
    init(_ doc: Document, at heads: [ChangeHash]) throws {
        let v = try doc.fork(at: heads)
        try load(v, .root, .map)
    }

    private func load(_ d: Document, _ id: ObjectID, _ type: ObjectType) throws {
        switch type {
        case .map:
            var m: [String: Value] = [:]
            for k in try d.keys(id) {
                let v = try d.get(id, k)!
                m[k] = v
                let c = try d.conflicts(id, k)
                if c.count > 1 { conflicts[id, default: [:]][k] = c }
                if case .object(let o, let t) = v { try load(d, o, t) }
            }
            nodes[id] = .map(m)
        case .list:
            var l: [Value] = []
            for i in 0..<(try d.length(id)) {
                let v = try d.get(id, at: i)!
                l.append(v)
                if case .object(let o, let t) = v { try load(d, o, t) }
            }
            nodes[id] = .list(l)
        case .text:
            nodes[id] = .text(Array(try d.text(id).unicodeScalars))
            marks[id] = try d.spans(id).flatMap { span in Array(repeating: span.marks, count: span.text.unicodeScalars.count) }
        }
    }

    private func created(_ v: Value) {
        guard case .object(let o, let t) = v else { return }
        switch t {
        case .map: nodes[o] = .map([:])
        case .list: nodes[o] = .list([])
        case .text:
            nodes[o] = .text([])
            marks[o] = []
        }
        conflicts[o] = nil
    }

    /// Applies a patch; a patch that does not fit the model is a test failure.
    func apply(_ p: Patch) throws {
        switch p {
        case .put(let o, .key(let k), let v):
            guard case .map(var m)? = nodes[o] else { throw ModelError.misfit(p) }
            m[k] = v
            nodes[o] = .map(m)
            created(v)
        case .put(let o, .index(let i), let v):
            guard case .list(var l)? = nodes[o], l.indices.contains(i) else { throw ModelError.misfit(p) }
            l[i] = v
            nodes[o] = .list(l)
            created(v)
        case .delete(let o, let k):
            guard case .map(var m)? = nodes[o], m[k] != nil else { throw ModelError.misfit(p) }
            m[k] = nil
            nodes[o] = .map(m)
            conflicts[o]?[k] = nil
        case .insert(let o, let i, let vs):
            guard case .list(var l)? = nodes[o], i >= 0, i <= l.count, !vs.isEmpty else { throw ModelError.misfit(p) }
            l.insert(contentsOf: vs, at: i)
            nodes[o] = .list(l)
            vs.forEach(created)
        case .splice(let o, let i, let s):
            guard case .text(var t)? = nodes[o], i >= 0, i <= t.count, !s.isEmpty else { throw ModelError.misfit(p) }
            t.insert(contentsOf: s.unicodeScalars, at: i)
            nodes[o] = .text(t)
            marks[o, default: []].insert(contentsOf: Array(repeating: [], count: s.unicodeScalars.count), at: i)
        case .remove(let o, let i, let n):
            switch nodes[o] {
            case .list(var l)?:
                guard i >= 0, n > 0, i + n <= l.count else { throw ModelError.misfit(p) }
                l.removeSubrange(i..<i + n)
                nodes[o] = .list(l)
            case .text(var t)?:
                guard i >= 0, n > 0, i + n <= t.count else { throw ModelError.misfit(p) }
                t.removeSubrange(i..<i + n)
                nodes[o] = .text(t)
                marks[o, default: []].removeSubrange(i..<i + n)
            default: throw ModelError.misfit(p)
            }
        case .increment(let o, let key, let by):
            func bump(_ v: Value) throws -> Value {
                guard case .scalar(.counter(let c)) = v else { throw ModelError.misfit(p) }
                return .scalar(.counter(c &+ by))
            }
            switch (nodes[o], key) {
            case (.map(var m)?, .key(let k)):
                guard let v = m[k] else { throw ModelError.misfit(p) }
                m[k] = try bump(v)
                nodes[o] = .map(m)
            case (.list(var l)?, .index(let i)):
                guard l.indices.contains(i) else { throw ModelError.misfit(p) }
                l[i] = try bump(l[i])
                nodes[o] = .list(l)
            default: throw ModelError.misfit(p)
            }
        case .marks(let o, let i, let n, let ms):
            guard case .text(let t)? = nodes[o], i >= 0, n > 0, i + n <= t.count else { throw ModelError.misfit(p) }
            marks[o]!.replaceSubrange(i..<i + n, with: Array(repeating: ms, count: n))
        case .conflict(let o, let key, let vs):
            guard nodes[o] != nil, !vs.isEmpty else { throw ModelError.misfit(p) }
            if case .key(let k) = key { conflicts[o, default: [:]][k] = vs.count > 1 ? vs : nil }
        }
    }

    func json(_ id: ObjectID = .root) -> JSONValue {
        switch nodes[id] {
        case .map(let m)?: return .object(m.mapValues(json(of:)))
        case .list(let l)?: return .array(l.map(json(of:)))
        case .text(let t)?:
            var s = ""
            s.unicodeScalars.append(contentsOf: t)
            return .string(s)
        case nil: return .null
        }
    }

    private func json(of v: Value) -> JSONValue {
        switch v {
        case .object(let o, _): return json(o)
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

    /// Every map reachable from the root, with its conflicting keys as the model holds them.
    func reachableConflicts() -> [ObjectID: [String: [Value]]] {
        var out: [ObjectID: [String: [Value]]] = [:]
        var stack: [ObjectID] = [.root]
        while let o = stack.popLast() {
            switch nodes[o] {
            case .map(let m)?:
                if let c = conflicts[o], !c.isEmpty { out[o] = c }
                for v in m.values { if let id = v.objectID { stack.append(id) } }
            case .list(let l)?:
                for v in l { if let id = v.objectID { stack.append(id) } }
            default: break
            }
        }
        return out
    }

    /// The text `id` as spans, cut where marks change (as `Document.spans` does).
    func spans(_ id: ObjectID) -> [TextSpan] {
        guard case .text(let t)? = nodes[id] else { return [] }
        var out: [TextSpan] = []
        for (k, scalar) in t.enumerated() {
            let m = marks[id]?[k] ?? []
            if let last = out.last, last.marks == m {
                out[out.count - 1].text.unicodeScalars.append(scalar)
            } else {
                out.append(TextSpan(String(Character(scalar)), marks: m))
            }
        }
        return out
    }

    enum ModelError: Error { case misfit(Patch) }
}
