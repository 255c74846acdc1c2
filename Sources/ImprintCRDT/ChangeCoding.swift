/// The canonical binary form of one change (see `docs/format.md`, "Change").
///
/// Layout: magic `IMPC`, version (1, or 2 when the change holds a mark op), then the body: actor table, seq, startOp, time,
/// message, deps, ops. Op ids are implicit (each op starts where the previous ended);
/// references to other ops are `(actor index + 1, counter)`, with 0 for none/root.
enum ChangeCoding {
    static let magic: [UInt8] = Array("IMPC".utf8)
    /// The version of changes without mark ops (their bytes, and so their hashes, are the
    /// same as before marks existed).
    static let version: UInt8 = 1
    /// The version of changes holding a mark op (tag 7): readers that predate marks refuse
    /// them with `unsupportedVersion` instead of misreading them.
    static let markVersion: UInt8 = 2
    /// Upper bound on op counters in one change, to keep decoders bounded.
    static let maxOpCount = 1 << 40

    enum Tag {
        static let put: UInt8 = 1
        static let delete: UInt8 = 2
        static let increment: UInt8 = 3
        static let insertText: UInt8 = 4
        static let insertElement: UInt8 = 5
        static let remove: UInt8 = 6
        static let mark: UInt8 = 7
    }

    // MARK: Encode

    /// Encodes a record. `actorOf` maps document actor indices to ids.
    static func encode(_ r: ChangeRecord, depHashes: [ChangeHash], actorOf: (Int32) -> ActorID) -> [UInt8] {
        // Actor table: author first, then every other referenced actor sorted by bytes.
        var others = Set<Int32>()
        var hasMarks = false
        func note(_ id: OpID) { if id.actor >= 0 && id.actor != r.actor { others.insert(id.actor) } }
        for op in r.ops {
            note(op.obj)
            switch op.action {
            case .put(let k, _, let p), .delete(let k, let p), .increment(let k, _, let p):
                if case .element(let e) = k { note(e) }
                p.forEach(note)
            case .insertText(let l, let rt, _, _), .insertElement(let l, let rt, _):
                note(l)
                note(rt)
            case .remove(let t, _):
                note(t)
            case .mark(let m):
                hasMarks = true
                if let i = m.start.item { note(i) }
                if let i = m.end.item { note(i) }
                if let i = m.instance { note(i) }
            }
        }
        let sortedOthers = others.sorted { actorOf($0) < actorOf($1) }
        var table: [Int32: Int] = [r.actor: 0]
        for (i, a) in sortedOthers.enumerated() { table[a] = i + 1 }

        var w = ByteWriter()
        w.raw(magic)
        w.byte(hasMarks ? markVersion : version)
        w.uleb(1 + sortedOthers.count)
        w.lengthPrefixed(actorOf(r.actor).bytes)
        for a in sortedOthers { w.lengthPrefixed(actorOf(a).bytes) }
        w.uleb(r.seq)
        w.uleb(r.startOp)
        w.uleb(r.opCount)
        w.sleb(r.time)
        if let m = r.message {
            w.byte(1)
            w.string(m)
        } else {
            w.byte(0)
        }
        let deps = depHashes.sorted()
        w.uleb(deps.count)
        for d in deps { w.raw(d.bytes) }
        w.uleb(r.ops.count)
        func id(_ o: OpID) {
            if o.actor < 0 {
                w.uleb(0)
            } else {
                w.uleb(table[o.actor]! + 1)
                w.uleb(o.counter)
            }
        }
        func key(_ k: Key) {
            switch k {
            case .map(let s):
                w.byte(0)
                w.string(s)
            case .element(let e):
                w.byte(1)
                id(e)
            }
        }
        func pred(_ p: [OpID]) {
            w.uleb(p.count)
            p.forEach(id)
        }
        for op in r.ops {
            switch op.action {
            case .put(let k, let v, let p):
                w.byte(Tag.put); id(op.obj); key(k); ValueCoding.encode(v, &w); pred(p)
            case .delete(let k, let p):
                w.byte(Tag.delete); id(op.obj); key(k); pred(p)
            case .increment(let k, let by, let p):
                w.byte(Tag.increment); id(op.obj); key(k); w.sleb(by); pred(p)
            case .insertText(let l, let rt, let bytes, let n):
                w.byte(Tag.insertText); id(op.obj); id(l); id(rt); w.uleb(n); w.lengthPrefixed(bytes)
            case .insertElement(let l, let rt, let v):
                w.byte(Tag.insertElement); id(op.obj); id(l); id(rt); ValueCoding.encode(v, &w)
            case .remove(let t, let n):
                w.byte(Tag.remove); id(op.obj); id(t); w.uleb(n)
            case .mark(let m):
                w.byte(Tag.mark); id(op.obj)
                // The writer is handed to the ref closure: `id` would access `w` a second time.
                MarkCoding.encode(m, &w) { o, w in
                    if o.actor < 0 {
                        w.uleb(0)
                    } else {
                        w.uleb(table[o.actor]! + 1)
                        w.uleb(o.counter)
                    }
                }
            }
        }
        return w.bytes
    }

    // MARK: Decode

    static func decode(_ bytes: [UInt8]) throws -> DecodedChange {
        var r = ByteReader(bytes)
        guard r.remaining >= 5, Array(try r.bytes(4)) == magic else {
            throw CRDTError(.notImprintData, "not an Imprint change")
        }
        let v = try r.byte()
        guard v == version || v == markVersion else { throw CRDTError(.unsupportedVersion, "change format version \(v)") }
        let actorCount = try r.count(max: min(r.remaining, 1 << 16))
        guard actorCount >= 1 else { throw CRDTError(.malformed, "change without author") }
        var actors: [ActorID] = []
        for _ in 0..<actorCount {
            let b = try r.lengthPrefixed()
            guard let a = ActorID(bytes: Array(b)) else { throw CRDTError(.malformed, "bad actor id") }
            actors.append(a)
        }
        let seq = try r.count(max: Int(Int32.max))
        guard seq >= 1 else { throw CRDTError(.malformed, "seq must start at 1") }
        let startOp = try r.count(max: maxOpCount)
        guard startOp >= 1 else { throw CRDTError(.malformed, "startOp must be positive") }
        let opCount = try r.count(max: maxOpCount)
        let time = try r.sleb()
        let hasMessage = try r.byte()
        var message: String?
        switch hasMessage {
        case 0: message = nil
        case 1: message = try r.string()
        default: throw CRDTError(.malformed, "bad message flag")
        }
        let depCount = try r.count(max: r.remaining / 32)
        var deps: [ChangeHash] = []
        for _ in 0..<depCount { deps.append(ChangeHash(unchecked: Array(try r.bytes(32)))) }
        let opsCount = try r.count(max: r.remaining / 2)

        func id() throws -> OpID {
            let a = try r.count(max: actorCount)
            if a == 0 { return .none }
            let c = try r.count(max: maxOpCount)
            return OpID(counter: c, actor: Int32(a - 1))
        }
        func obj() throws -> OpID {
            let o = try id()
            return o.isNone ? .root : o
        }
        func key() throws -> Key {
            switch try r.byte() {
            case 0: return .map(try r.string())
            case 1:
                let e = try id()
                guard !e.isNone else { throw CRDTError(.malformed, "element key without id") }
                return .element(e)
            default: throw CRDTError(.malformed, "bad key tag")
            }
        }
        func pred() throws -> [OpID] {
            let n = try r.count(max: r.remaining)
            var p: [OpID] = []
            for _ in 0..<n {
                let x = try id()
                guard !x.isNone else { throw CRDTError(.malformed, "empty pred") }
                p.append(x)
            }
            return p
        }
        var ops: [Op] = []
        var next = startOp
        for _ in 0..<opsCount {
            let tag = try r.byte()
            let o = try obj()
            let action: Op.Action
            switch tag {
            case Tag.put: action = .put(key: try key(), value: try ValueCoding.decode(&r), pred: try pred())
            case Tag.delete: action = .delete(key: try key(), pred: try pred())
            case Tag.increment: action = .increment(key: try key(), by: try r.sleb(), pred: try pred())
            case Tag.insertText:
                let l = try id()
                let rt = try id()
                let n = try r.count(max: r.remaining)
                let b = try r.lengthPrefixed()
                guard n >= 1, let s = String(validating: b, as: UTF8.self), s.unicodeScalars.count == n else {
                    throw CRDTError(.malformed, "text insert content does not match its length")
                }
                action = .insertText(left: l, right: rt, utf8: Array(b), count: n)
            case Tag.insertElement:
                let l = try id()
                let rt = try id()
                action = .insertElement(left: l, right: rt, value: try ValueCoding.decode(&r))
            case Tag.remove:
                let t = try id()
                let n = try r.count(max: maxOpCount)
                guard !t.isNone, n >= 1 else { throw CRDTError(.malformed, "bad remove") }
                action = .remove(target: t, count: n)
            case Tag.mark:
                guard v == markVersion else { throw CRDTError(.malformed, "mark op in a version \(v) change") }
                action = .mark(try MarkCoding.decode(&r) { r in
                    let a = try r.count(max: actorCount)
                    if a == 0 { return nil }
                    return OpID(counter: try r.count(max: maxOpCount), actor: Int32(a - 1))
                })
            default:
                throw CRDTError(.malformed, "unknown op tag \(tag)")
            }
            let op = Op(id: OpID(counter: next, actor: 0), obj: o, action: action)
            // Canonical form: an insert run that continues the previous one must be joined to it.
            if case .insertText(let l2, let r2, _, _) = action, let last = ops.last, last.obj == o,
                case .insertText(_, let r1, _, let n1) = last.action, r1 == r2, l2 == OpID(counter: next - 1, actor: 0),
                last.id.counter + n1 == next
            {
                throw CRDTError(.malformed, "non-canonical change: split insert run")
            }
            next += op.width
            guard next - startOp <= opCount else { throw CRDTError(.malformed, "ops exceed the declared op count") }
            ops.append(op)
        }
        guard next - startOp == opCount else { throw CRDTError(.malformed, "op count mismatch") }
        // Canonical form: version 2 exactly when a mark op is present.
        if v == markVersion, !ops.contains(where: { if case .mark = $0.action { true } else { false } }) {
            throw CRDTError(.malformed, "version 2 change without a mark op")
        }
        guard r.isAtEnd else { throw CRDTError(.malformed, "trailing bytes after change") }
        return DecodedChange(actors: actors, seq: seq, startOp: startOp, opCount: opCount, time: time, message: message, deps: deps, ops: ops)
    }
}

/// Encoding of scalar values and object creations, shared by changes and documents.
enum ValueCoding {
    static func encode(_ v: NewValue, _ w: inout ByteWriter) {
        switch v {
        case .object(let t): w.byte(16 + t.rawValue)
        case .scalar(let s):
            switch s {
            case .null: w.byte(0)
            case .bool(let b): w.byte(b ? 2 : 1)
            case .int(let i): w.byte(3); w.sleb(i)
            case .uint(let u): w.byte(4); w.uleb(u)
            case .double(let d): w.byte(5); w.uint64LE(d.bitPattern)
            case .string(let s): w.byte(6); w.string(s)
            case .bytes(let b): w.byte(7); w.lengthPrefixed(b)
            case .timestamp(let t): w.byte(8); w.sleb(t)
            case .counter(let c): w.byte(9); w.sleb(c)
            }
        }
    }

    static func decode(_ r: inout ByteReader) throws -> NewValue {
        let tag = try r.byte()
        switch tag {
        case 0: return .scalar(.null)
        case 1: return .scalar(.bool(false))
        case 2: return .scalar(.bool(true))
        case 3: return .scalar(.int(try r.sleb()))
        case 4: return .scalar(.uint(try r.uleb()))
        case 5: return .scalar(.double(Double(bitPattern: try r.uint64LE())))
        case 6: return .scalar(.string(try r.string()))
        case 7: return .scalar(.bytes(Array(try r.lengthPrefixed())))
        case 8: return .scalar(.timestamp(try r.sleb()))
        case 9: return .scalar(.counter(try r.sleb()))
        case 16, 17, 18: return .object(ObjectType(rawValue: tag - 16)!)
        default: throw CRDTError(.malformed, "unknown value tag \(tag)")
        }
    }
}
