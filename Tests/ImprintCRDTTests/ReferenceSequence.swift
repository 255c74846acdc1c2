import ImprintEncoding
@testable import ImprintCRDT

/// A deliberately naive sequence CRDT (one array entry per item, linear scans) that
/// follows the FugueMax / YjsMod integration rule literally, for text and for lists. The
/// engine's run-length, tree-backed implementation must always produce the same order.
struct ReferenceSequence {
    struct ItemID: Hashable {
        var actor: ActorID
        var counter: Int

        /// The engine's order of op ids: counter, then actor.
        static func < (a: ItemID, b: ItemID) -> Bool {
            a.counter != b.counter ? a.counter < b.counter : a.actor < b.actor
        }
    }

    enum Content {
        case scalar(Unicode.Scalar)
        /// A list element: every value written to it that no later write saw (the greatest
        /// id is read), as for map keys.
        case element([ItemID: JSONValue])
    }

    struct Item {
        var id: ItemID
        var left: ItemID?
        var right: ItemID?
        var deleted: Bool
        var content: Content
    }

    var items: [Item] = []

    var text: String {
        var s = String.UnicodeScalarView()
        for i in items where !i.deleted { if case .scalar(let c) = i.content { s.append(c) } }
        return String(s)
    }

    /// The list's values, as `jsonValue` reads them.
    var elements: [JSONValue] {
        items.compactMap { item in
            guard !item.deleted, case .element(let writes) = item.content else { return nil }
            return writes.max { $0.key < $1.key }?.value
        }
    }

    func index(of id: ItemID?) -> Int? {
        guard let id else { return nil }
        return items.firstIndex { $0.id == id }
    }

    mutating func integrate(_ new: Item) {
        let left = index(of: new.left) ?? -1
        let right = new.right == nil ? items.count : index(of: new.right)!
        var dest = left + 1
        var scanning = false
        var i = left + 1
        while true {
            if !scanning { dest = i }
            if i == items.count || i == right { break }
            let other = items[i]
            let oleft = index(of: other.left) ?? -1
            let oright = other.right == nil ? items.count : index(of: other.right)!
            if oleft < left { break }
            if oleft == left {
                if oright < right {
                    scanning = true
                } else if oright == right {
                    if new.id.actor < other.id.actor { break }
                    scanning = false
                } else {
                    scanning = false
                }
            }
            i += 1
        }
        items.insert(new, at: dest)
    }

    /// Feeds every op of `change` on the text or list object `obj`.
    mutating func apply(_ change: Change, sequence obj: ObjectID) {
        let d = change.decoded
        func id(_ o: OpID) -> ItemID? {
            o.actor < 0 ? nil : ItemID(actor: d.actors[Int(o.actor)], counter: o.counter)
        }
        for op in d.ops {
            guard let target = id(op.obj), target.counter == obj.counter, target.actor == obj.actor else { continue }
            switch op.action {
            case .insertText(let l, let r, let bytes, _):
                var prev = id(l)
                for (k, s) in String(decoding: bytes, as: UTF8.self).unicodeScalars.enumerated() {
                    let me = ItemID(actor: change.actor, counter: op.id.counter + k)
                    integrate(Item(id: me, left: prev, right: id(r), deleted: false, content: .scalar(s)))
                    prev = me
                }
            case .insertElement(let l, let r, let value):
                let me = ItemID(actor: change.actor, counter: op.id.counter)
                integrate(Item(id: me, left: id(l), right: id(r), deleted: false, content: .element([me: Self.json(value)])))
            case .put(.element(let element), let value, let pred):
                guard let elementID = id(element), let i = index(of: elementID), case .element(var writes) = items[i].content else { continue }
                for p in pred.compactMap(id) { writes[p] = nil }
                writes[ItemID(actor: change.actor, counter: op.id.counter)] = Self.json(value)
                items[i].content = .element(writes)
            case .remove(let t, let n):
                for k in 0..<n {
                    let tid = ItemID(actor: d.actors[Int(t.actor)], counter: t.counter + k)
                    if let i = index(of: tid) { items[i].deleted = true }
                }
            default:
                break
            }
        }
    }
}

extension ReferenceSequence {
    /// A value as `jsonValue` reads it (the reference documents hold scalars only).
    static func json(_ value: NewValue) -> JSONValue {
        switch value {
        case .scalar(.null): .null
        case .scalar(.bool(let b)): .bool(b)
        case .scalar(.int(let i)), .scalar(.counter(let i)), .scalar(.timestamp(let i)): .number(Double(i))
        case .scalar(.uint(let u)): .number(Double(u))
        case .scalar(.double(let x)): .number(x)
        case .scalar(.string(let s)): .string(s)
        default: .string("<\(value)>")
        }
    }
}

/// A naive map of multi-value registers: each key keeps every put that no later put or
/// delete saw (its `pred`), and reads the one with the greatest op id; a delete that saw
/// every put empties the key. The engine's root map must read the same.
struct ReferenceMap {
    typealias ItemID = ReferenceSequence.ItemID

    /// Per key, the live writes (nil: an object, read from its own reference).
    var live: [String: [ItemID: NewValue]] = [:]

    /// Feeds every op of `change` on the root map.
    mutating func apply(_ change: Change) {
        let d = change.decoded
        func id(_ o: OpID) -> ItemID { ItemID(actor: d.actors[Int(o.actor)], counter: o.counter) }
        for op in d.ops where op.obj == .root {
            switch op.action {
            case .put(.map(let key), let value, let pred):
                for p in pred { live[key]?[id(p)] = nil }
                live[key, default: [:]][ItemID(actor: change.actor, counter: op.id.counter)] = value
            case .delete(.map(let key), let pred):
                for p in pred { live[key]?[id(p)] = nil }
            default:
                break
            }
        }
    }

    /// The winning value of every key that has one.
    var winners: [String: NewValue] {
        live.compactMapValues { writes in writes.max { $0.key < $1.key }?.value }
    }
}
