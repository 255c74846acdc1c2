extension Document {
    /// Applies changes from other replicas, in any order and any number of times.
    ///
    /// A change whose dependencies are missing waits (see ``pendingChangeCount``) and is
    /// applied as soon as they arrive. A change that fails validation throws and leaves
    /// the document as it was before that change.
    public func apply(_ changes: [Change]) throws {
        try completeLoad()
        try publishingRemotePatches { try integrate(changes) }
    }

    private func integrate(_ changes: [Change]) throws {
        // Dependencies are found by hash: make sure every change here has one.
        if recordByHash.count < records.count { sealAll() }
        // `changes` in order, each change a dependency wakes taken first (last woken first).
        var next = changes.startIndex
        var woken: [Change] = []
        var waiting: [ChangeHash: [Change]] = [:]
        for p in pending.values {
            if let missing = p.deps.first(where: { recordByHash[$0] == nil }) { waiting[missing, default: []].append(p) }
        }
        while true {
            let c: Change
            if let w = woken.popLast() {
                c = w
            } else if next < changes.endIndex {
                c = changes[next]
                next += 1
            } else {
                break
            }
            if recordByHash[c.hash] != nil { continue }
            if let missing = c.deps.first(where: { recordByHash[$0] == nil }) {
                if pending[c.hash] == nil { pending[c.hash] = c }
                waiting[missing, default: []].append(c)
                continue
            }
            pending[c.hash] = nil
            try applyReady(c)
            if let ready = waiting.removeValue(forKey: c.hash) { woken.append(contentsOf: ready) }
        }
    }

    /// Applies one change from another replica (see ``apply(_:)``).
    public func apply(_ change: Change) throws { try apply([change]) }

    /// How many received changes are waiting for dependencies.
    public var pendingChangeCount: Int { pending.count }

    /// Applies a change whose dependencies are all present.
    private func applyReady(_ c: Change) throws {
        // Actors first seen in this change are interned to map its op ids; if the change is
        // refused they are forgotten again, so a refused change leaves no trace (the actor
        // table is saved with the document).
        let actorsBefore = actors.count
        do {
            try integrateReady(c)
        } catch {
            for actor in actors[actorsBefore...] { actorIndex[actor] = nil }
            actors.removeLast(actors.count - actorsBefore)
            throw error
        }
    }

    private func integrateReady(_ c: Change) throws {
        let d = c.decoded
        let map = d.actors.map { intern($0) }
        let author = map[0]
        let last = lastSeq[author] ?? 0
        if d.seq <= last {
            throw CRDTError(.duplicateSequence, "actor \(d.actors[0]) seq \(d.seq) already present with other content")
        }
        guard d.seq == last + 1 else { throw CRDTError(.malformed, "seq \(d.seq) skips \(last + 1)") }
        if let prev = lastRecordOfActor[author] {
            guard d.startOp > records[prev].maxOp else { throw CRDTError(.malformed, "op counters go backwards") }
        }
        func m(_ id: OpID) -> OpID { id.actor < 0 ? id : OpID(counter: id.counter, actor: map[Int(id.actor)]) }
        var ops: [Op] = []
        ops.reserveCapacity(d.ops.count)
        for op in d.ops {
            var o = op
            o.id = OpID(counter: op.id.counter, actor: author)
            o.obj = m(op.obj)
            switch op.action {
            case .put(let k, let v, let p): o.action = .put(key: mapKey(k, m), value: v, pred: p.map(m))
            case .delete(let k, let p): o.action = .delete(key: mapKey(k, m), pred: p.map(m))
            case .increment(let k, let by, let p): o.action = .increment(key: mapKey(k, m), by: by, pred: p.map(m))
            case .insertText(let l, let r, let b, let n): o.action = .insertText(left: m(l), right: m(r), utf8: b, count: n)
            case .insertElement(let l, let r, let v): o.action = .insertElement(left: m(l), right: m(r), value: v)
            case .remove(let t, let n): o.action = .remove(target: m(t), count: n)
            case .mark(let mk): o.action = .mark(mk.mapIDs(m))
            }
            ops.append(o)
        }
        try validate(ops)
        for op in ops { try applyRemote(op) }
        remotePatches?.changes += 1
        let deps = d.deps.map { recordByHash[$0]! }
        let r = ChangeRecord(
            actor: author, seq: d.seq, startOp: d.startOp, opCount: d.opCount, time: d.time, message: d.message,
            deps: deps, ops: ops)
        r.hash = c.hash
        r.bytes = c.bytes
        _ = appendRecord(r)
        if openRecord != nil { openRecord = nil }
        maxCounter = max(maxCounter, r.maxOp)
    }

    private func mapKey(_ k: Key, _ f: (OpID) -> OpID) -> Key {
        if case .element(let e) = k { return .element(f(e)) }
        return k
    }

    /// Checks every reference in a change's ops before anything is applied, so a bad
    /// change cannot leave the document half-changed.
    private func validate(_ ops: [Op]) throws {
        var created: [OpID: ObjectType] = [:]
        // Items inserted by this change, per object: (first id, count).
        var inserted: [OpID: [(OpID, Int)]] = [:]
        // Mark ops of this change (an overlapping mark may be named by one of them).
        var marksAdded = Set<OpID>()
        func type(_ o: OpID) throws -> ObjectType {
            if let t = created[o] { return t }
            guard let s = objects[o] else { throw CRDTError(.malformed, "op on unknown object") }
            return s.type
        }
        func exists(_ id: OpID, in o: OpID) -> Bool {
            if case .sequence(let s) = objects[o], s.locate(id) != nil { return true }
            return inserted[o]?.contains { $0.0.actor == id.actor && id.counter >= $0.0.counter && id.counter < $0.0.counter + $0.1 } ?? false
        }
        /// End (exclusive) of the run of existing ids starting at `id`.
        func runEnd(_ id: OpID, in o: OpID) -> Int? {
            if case .sequence(let s) = objects[o], let loc = s.locate(id) {
                let sp = loc.leaf.spans[loc.span]
                return sp.id.counter + sp.length
            }
            if let r = inserted[o]?.first(where: { $0.0.actor == id.actor && id.counter >= $0.0.counter && id.counter < $0.0.counter + $0.1 }) {
                return r.0.counter + r.1
            }
            return nil
        }
        for op in ops {
            let t = try type(op.obj)
            switch op.action {
            case .put(let k, _, _), .delete(let k, _), .increment(let k, _, _):
                switch (k, t) {
                case (.map, .map): break
                case (.element(let e), .list):
                    guard exists(e, in: op.obj) else { throw CRDTError(.malformed, "unknown element") }
                default: throw CRDTError(.malformed, "key does not fit object type")
                }
            case .insertText(let l, let r, _, _), .insertElement(let l, let r, _):
                let isTextOp = { if case .insertText = op.action { true } else { false } }()
                guard t != .map, (t == .text) == isTextOp else {
                    throw CRDTError(.malformed, "insert does not fit object type")
                }
                guard l.isNone || exists(l, in: op.obj), r.isNone || exists(r, in: op.obj) else {
                    throw CRDTError(.malformed, "insert origin unknown")
                }
                inserted[op.obj, default: []].append((op.id, op.width))
            case .remove(let target, let n):
                guard t != .map else { throw CRDTError(.malformed, "remove on a map") }
                var c = target.counter
                while c < target.counter + n {
                    guard let e = runEnd(OpID(counter: c, actor: target.actor), in: op.obj) else {
                        throw CRDTError(.malformed, "remove of unknown item")
                    }
                    c = e
                }
            case .mark(let mk):
                guard t == .text else { throw CRDTError(.malformed, "mark on a \(t)") }
                for item in [mk.start.item, mk.end.item].compactMap({ $0 }) {
                    guard !item.isNone, exists(item, in: op.obj) else { throw CRDTError(.malformed, "mark anchor unknown") }
                }
                // An overlapping mark is named by the op that added it: this one, or an earlier mark op.
                if let i = mk.instance, i != op.id {
                    let known: Bool
                    if case .sequence(let s) = objects[op.obj], s.marks.contains(where: { $0.id == i }) { known = true } else { known = marksAdded.contains(i) }
                    guard known else { throw CRDTError(.malformed, "mark instance unknown") }
                }
                marksAdded.insert(op.id)
            }
            if case .put(_, .object(let nt), _) = op.action { created[op.id] = nt }
            if case .insertElement(_, _, .object(let nt)) = op.action { created[op.id] = nt }
        }
    }

    /// Applies one validated remote op to the state.
    func applyRemote(_ op: Op) throws {
        guard let st = objects[op.obj] else { throw CRDTError(.malformed, "op on unknown object") }
        if remotePatches != nil {
            switch op.action {
            case .insertText, .remove: break  // logged below, where the text allows it
            default: remotePatches?.needsDiff = true
            }
        }
        switch (op.action, st) {
        case (.put(.map(let k), let v, let pred), .map(let m)):
            m.keys[k, default: Register()].overwrite(pred: pred, with: .init(id: op.id, value: v))
            createObjectIfNeeded(op.id, v)
        case (.delete(.map(let k), let pred), .map(let m)):
            m.keys[k]?.overwrite(pred: pred, with: nil)
            if m.keys[k]?.isEmpty == true { m.keys[k] = nil }
        case (.increment(.map(let k), let by, let pred), .map(let m)):
            m.keys[k]?.increment(pred: pred, by: by)
        case (.put(.element(let e), let v, let pred), .sequence(let s)):
            guard let loc = s.locate(e) else { throw CRDTError(.malformed, "unknown element") }
            let ci = loc.leaf.spans[loc.span].contentStart + loc.offset
            s.elements[ci].overwrite(pred: pred, with: .init(id: op.id, value: v))
            createObjectIfNeeded(op.id, v)
        case (.delete(.element(let e), let pred), .sequence(let s)):
            guard let loc = s.locate(e) else { throw CRDTError(.malformed, "unknown element") }
            let ci = loc.leaf.spans[loc.span].contentStart + loc.offset
            s.elements[ci].overwrite(pred: pred, with: nil)
        case (.increment(.element(let e), let by, let pred), .sequence(let s)):
            guard let loc = s.locate(e) else { throw CRDTError(.malformed, "unknown element") }
            let ci = loc.leaf.spans[loc.span].contentStart + loc.offset
            s.elements[ci].increment(pred: pred, by: by)
        case (.insertText(let l, let r, let bytes, let n), .sequence(let s)) where s.isText:
            let start = s.appendText(bytes)
            try s.integrate(
                Span(id: op.id, length: n, left: l, right: r, contentStart: start, contentBytes: bytes.count, deleted: false),
                actorLess: actorLess)
            if remotePatches != nil {
                if s.marks.isEmpty, let loc = s.locate(op.id) {
                    remotePatches?.patches.append(.splice(obj: publicID(op.obj), index: s.visibleIndex(of: loc),
                                                          text: String(decoding: bytes, as: UTF8.self)))
                } else {
                    remotePatches?.needsDiff = true
                }
            }
        case (.insertElement(let l, let r, let v), .sequence(let s)) where !s.isText:
            let start = s.appendElement(Register(entries: [.init(id: op.id, value: v)]))
            try s.integrate(
                Span(id: op.id, length: 1, left: l, right: r, contentStart: start, contentBytes: 1, deleted: false),
                actorLess: actorLess)
            createObjectIfNeeded(op.id, v)
        case (.remove(let t, let n), .sequence(let s)):
            if remotePatches != nil, s.isText, s.marks.isEmpty {
                let obj = publicID(op.obj)
                try s.deleteByID(t, count: n) { index, count in
                    self.remotePatches?.patches.append(.remove(obj: obj, index: index, count: count))
                }
            } else {
                if remotePatches != nil { remotePatches?.needsDiff = true }
                try s.deleteByID(t, count: n)
            }
        case (.mark(let mk), .sequence(let s)) where s.isText:
            s.addMark(mk, id: op.id)
        default:
            throw CRDTError(.malformed, "op does not fit object type")
        }
    }
}
