@testable import ImprintCRDT

/// A deliberately naive sequence CRDT (one array entry per item, linear scans) that
/// follows the FugueMax / YjsMod integration rule literally. The engine's run-length,
/// tree-backed implementation must always produce the same order.
struct ReferenceSequence {
    struct ItemID: Hashable {
        var actor: ActorID
        var counter: Int
    }

    struct Item {
        var id: ItemID
        var left: ItemID?
        var right: ItemID?
        var deleted: Bool
        var scalar: Unicode.Scalar
    }

    var items: [Item] = []

    var text: String {
        var s = String.UnicodeScalarView()
        for i in items where !i.deleted { s.append(i.scalar) }
        return String(s)
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

    /// Feeds every text op of `change` (for the text object `obj`).
    mutating func apply(_ change: Change, text obj: ObjectID) {
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
                    integrate(Item(id: me, left: prev, right: id(r), deleted: false, scalar: s))
                    prev = me
                }
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
