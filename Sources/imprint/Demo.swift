import ArgumentParser
import ImprintCRDT

/// `imprint demo`: the main job on the embedded default. Two replicas of one document
/// edit concurrently while offline, then converge through the sync protocol; the demo
/// prints every step so a reader can follow what the engine did.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what Imprint can do today.")

    func run() throws {
        print("== Imprint demo: two replicas, concurrent edits, sync, convergence ==")
        let laptop = Document(actor: .named("laptop"))
        let body = try laptop.change(message: "create") { tx -> ObjectID in
            try tx.put(.root, "title", "Field notes")
            try tx.put(.root, "edits", .scalar(.counter(0)))
            let body = try tx.put(.root, "body", .text)!
            try tx.splice(body, at: 0, insert: "The river was calm today.")
            return body
        }
        let phone = Document(actor: .named("phone"))
        try phone.apply(laptop.allChanges())
        print("laptop and phone share:   \(try laptop.text(body).debugDescription)")

        // Offline, both edit the same sentence and the same title.
        let cursor = try laptop.cursor(body, at: 10)  // before "was"
        try laptop.change(message: "laptop edit") { tx in
            try tx.splice(body, at: 4, delete: 5, insert: "creek")
            try tx.put(.root, "title", "Field notes (laptop)")
            try tx.increment(.root, "edits")
        }
        try phone.change(message: "phone edit") { tx in
            try tx.splice(body, at: 24, insert: ". Two herons fished near the bank")
            try tx.put(.root, "title", "Field notes (phone)")
            try tx.increment(.root, "edits")
        }
        print("laptop, offline:          \(try laptop.text(body).debugDescription)")
        print("phone, offline:           \(try phone.text(body).debugDescription)")

        // Sync until neither side has anything to say.
        var laptopState = SyncState()
        var phoneState = SyncState()
        var rounds = 0
        var bytes = 0
        while true {
            let toPhone = laptop.generateSyncMessage(&laptopState)
            let toLaptop = phone.generateSyncMessage(&phoneState)
            if toPhone == nil && toLaptop == nil { break }
            if let m = toPhone { bytes += m.count; try phone.receiveSyncMessage(&phoneState, m) }
            if let m = toLaptop { bytes += m.count; try laptop.receiveSyncMessage(&laptopState, m) }
            rounds += 1
        }
        print("sync:                     \(rounds) round trips, \(bytes) bytes")
        print("laptop after sync:        \(try laptop.text(body).debugDescription)")
        print("phone after sync:         \(try phone.text(body).debugDescription)")
        let titles = try laptop.conflicts(.root, "title").compactMap(\.string)
        print("title conflict kept:      \(titles) -> winner \(try laptop.get(.root, "title")?.string ?? "-")")
        print("counter (both +1):        \(try laptop.get(.root, "edits")?.int ?? 0)")
        print("cursor before \"was\":      index \(try laptop.index(of: cursor, in: body)) on both")

        let converged = try laptop.jsonValue() == phone.jsonValue() && laptop.currentHeads == phone.currentHeads
        print("converged:                \(converged) (heads \(laptop.currentHeads.map { String($0.hex.prefix(8)) }))")

        // Full history survives a save/load round trip, and old versions stay readable.
        let saved = laptop.save()
        let reloaded = try Document.load(saved)
        let first = try reloaded.fork(at: [laptop.allChanges()[0].hash])
        print("saved with history:       \(saved.count) bytes; reloaded equal: \(try reloaded.jsonValue() == laptop.jsonValue())")
        print("version 1, from history:  \(try first.text(body).debugDescription)")
        try laptop.undo()
        print("laptop undoes its edit:   \(try laptop.text(body).debugDescription)")
        guard converged else { throw ExitCode(1) }

        try FolderSyncDemo.run()
        try CoEditingDemo.run()
        try ReviewerDemo.run()
    }
}
