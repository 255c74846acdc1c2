/// The value slot of a map key or list element: every concurrently written value
/// survives as an entry until a later op names it as a predecessor.
struct Register: Sendable {
    struct Entry: Sendable {
        var id: OpID
        var value: NewValue
        /// Sum of increments applied to a counter value.
        var increments: Int64 = 0
    }

    var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }

    /// Applies a put or delete: drops the entries named in `pred`, then adds `entry` if any.
    mutating func overwrite(pred: [OpID], with entry: Entry?) {
        if !pred.isEmpty { entries.removeAll { e in pred.contains(e.id) } }
        if let entry { entries.append(entry) }
    }

    mutating func increment(pred: [OpID], by: Int64) {
        for i in entries.indices where pred.contains(entries[i].id) {
            entries[i].increments &+= by
        }
    }

    /// The deterministic winner: the entry with the greatest id (counter, then actor bytes).
    func winner(_ actorLess: (Int32, Int32) -> Bool) -> Entry? {
        var best: Entry?
        for e in entries {
            guard let b = best else {
                best = e
                continue
            }
            if e.id.counter > b.id.counter || (e.id.counter == b.id.counter && actorLess(b.id.actor, e.id.actor)) {
                best = e
            }
        }
        return best
    }

    /// All entries, winner last.
    func sorted(_ actorLess: (Int32, Int32) -> Bool) -> [Entry] {
        entries.sorted { a, b in
            a.id.counter < b.id.counter || (a.id.counter == b.id.counter && actorLess(a.id.actor, b.id.actor))
        }
    }
}

/// The state of one map object.
final class MapState {
    var keys: [String: Register] = [:]
}

/// A document object's state.
enum ObjectState {
    case map(MapState)
    case sequence(SequenceState)

    var type: ObjectType {
        switch self {
        case .map: .map
        case .sequence(let s): s.isText ? .text : .list
        }
    }
}
