import ArgumentParser
import ImprintCRDT

/// `imprint demo`: the main job on the embedded default. Two replicas of one document
/// edit concurrently while offline, then converge through the sync protocol; the demo
/// prints every step so a reader can follow what the engine did.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what Imprint can do today.")

    @Flag(help: "Print one JSON object, {\"steps\": [{\"name\", \"ok\", \"ms\", \"detail\"}], \"ok\"}, and no narration.")
    var json = false

    func run() throws {
        let report = DemoReport(json: json)
        do {
            try replicas(report)
            try FolderSyncDemo.run(report)
            try CoEditingDemo.run(report)
            try ReviewerDemo.run(report)
        } catch {
            report.fail(error)
        }
        report.finish()
        if !report.ok { throw ExitCode(1) }
    }

    /// Two replicas of one document edit concurrently while offline, then converge.
    func replicas(_ report: DemoReport) throws {
        report.say("Imprint demo: two replicas, concurrent edits, sync, convergence", heading: true)
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
        report.say("laptop and phone share:   \(try laptop.text(body).debugDescription)")

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
        report.say("laptop, offline:          \(try laptop.text(body).debugDescription)")
        report.say("phone, offline:           \(try phone.text(body).debugDescription)")

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
        report.say("sync:                     \(rounds) round trips, \(bytes) bytes")
        report.say("laptop after sync:        \(try laptop.text(body).debugDescription)")
        report.say("phone after sync:         \(try phone.text(body).debugDescription)")
        let titles = try laptop.conflicts(.root, "title").compactMap(\.string)
        report.say("title conflict kept:      \(titles) -> winner \(try laptop.get(.root, "title")?.string ?? "-")")
        report.say("counter (both +1):        \(try laptop.get(.root, "edits")?.int ?? 0)")
        report.say("cursor before \"was\":      index \(try laptop.index(of: cursor, in: body)) on both")

        let converged = try laptop.jsonValue() == phone.jsonValue() && laptop.currentHeads == phone.currentHeads
        report.say("converged:                \(converged) (heads \(laptop.currentHeads.map { String($0.hex.prefix(8)) }))")
        try report.check("replicas converge", converged, "\(rounds) sync round trips, \(bytes) bytes; text, title conflict and counter agree")

        // Full history survives a save/load round trip, and old versions stay readable.
        let saved = laptop.save()
        let reloaded = try Document.load(saved)
        let first = try reloaded.fork(at: [laptop.allChanges()[0].hash])
        let reloadedEqual = try reloaded.jsonValue() == laptop.jsonValue()
        report.say("saved with history:       \(saved.count) bytes; reloaded equal: \(reloadedEqual)")
        report.say("version 1, from history:  \(try first.text(body).debugDescription)")
        try laptop.undo()
        report.say("laptop undoes its edit:   \(try laptop.text(body).debugDescription)")
        let undone = try laptop.text(body) == "The river was calm today. Two herons fished near the bank."
        try report.check("history and undo", reloadedEqual && undone,
                         "saved with history in \(saved.count) bytes, reloaded equal, version 1 readable, undo")
    }
}
