@testable import ImprintCRDT
import ImprintTestSupport

/// Runs full-duplex sync rounds between two replicas until both fall silent; returns the
/// number of rounds that carried at least one message. `deliver(round, fromA)` decides
/// whether a message arrives (false drops it); `changesSent` hears each message's change count.
func syncRounds(
    _ a: Document, _ sa: inout SyncState, _ b: Document, _ sb: inout SyncState, limit: Int = 100,
    deliver: (Int, Bool) -> Bool = { _, _ in true }, changesSent: ((Int) -> Void)? = nil
) throws -> Int {
    var rounds = 0
    while rounds < limit {
        let ma = a.generateSyncMessage(&sa)
        let mb = b.generateSyncMessage(&sb)
        if ma == nil && mb == nil { return rounds }
        if let changesSent {
            for m in [ma, mb] { if let m { changesSent(try SyncMessage(decoding: m).changes.count) } }
        }
        if let ma, deliver(rounds, true) { try b.receiveSyncMessage(&sb, ma) }
        if let mb, deliver(rounds, false) { try a.receiveSyncMessage(&sa, mb) }
        rounds += 1
    }
    return rounds
}

/// A text document with one shared text object at root key "t", and `n` replicas of it.
func replicas(_ names: [String]) throws -> (docs: [Document], text: ObjectID) {
    let base = Document(actor: .named("base"))
    let t = try base.change(time: 0) { try $0.put(.root, "t", .text)! }
    try base.change(time: 0) { try $0.splice(t, at: 0, insert: "base") }
    var docs: [Document] = []
    for n in names {
        let d = Document(actor: .named(n))
        try d.apply(base.allChanges())
        d.coalescesLocalChanges = false
        docs.append(d)
    }
    return (docs, t)
}

/// Makes `count` separate local changes, each inserting a few characters somewhere.
func typeChanges(_ d: Document, _ t: ObjectID, count: Int, rng: inout SplitMix64) throws {
    for k in 0..<count {
        // A fixed clock keeps change hashes, and so Bloom filter luck, the same every run.
        try d.change(time: Int64(k)) { tx in
            let len = try d.length(t)
            let at = Int.random(in: 0...len, using: &rng)
            if len > 3 && Bool.random(using: &rng) {
                try tx.splice(t, at: min(at, len - 1), delete: 1)
            }
            try tx.splice(t, at: min(at, try d.length(t)), insert: "\(k % 10)")
        }
    }
}
