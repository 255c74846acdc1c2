import AsyncHTTPClient
import Foundation
import ImprintBundle
import ImprintCRDT
import ImprintDelivery
import ImprintKeys
import ImprintServer
import ImprintStore
import ImprintSync
import ImprintZoneService
import ImprintZones
import Logging
import ServiceLifecycle

/// The co-editing part of `imprint demo`: a Delivery Service and zone service started in
/// this process on loopback (SQLite and asset files in a temporary directory), three people
/// with homes of their own sharing one document end-to-end encrypted, one of them offline for
/// a while, a figure shared, a caret seen, an edit shown before it is pushed, a document
/// shared without its deleted text, then a removal, compaction, a member receiving through a
/// zone server of his own; and a look at what the servers stored.
enum CoEditingDemo {
    static func run(_ report: DemoReport) throws {
        report.say("Co-editing: three people, one server that reads nothing, a removal", heading: true)
        try runBlocking { try await walkThrough(report) }
    }

    static func walkThrough(_ report: DemoReport) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-demo-coedit-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root + "/server", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let main = try await DemoServer.start(directory: root + "/server")
        defer { main.task.cancel() }
        let url = main.url
        report.say("server:                   Delivery Service + zone service on \(url) (SQLite, in this process)")
        try report.check("server started", true, "Delivery Service and zone service on \(url), SQLite in a temporary directory")
        report.progress("three identities publish their key packages")

        func person(_ name: String) async throws -> (account: SyncAccount, device: DeviceID, bundle: String) {
            let home = ImprintHome(path: root + "/home-\(name)")
            try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
            let account = try await SyncAccount.connect(home: home, keyStore: try home.openKeyStore(passphrase: nil), serverURL: url)
            try await account.topUpKeyPackages()
            return (account, try DeviceID(name), root + "/\(name).imprint")
        }
        let ada = try await person("ada"), ben = try await person("ben"), cy = try await person("cy")
        report.say("identities:               ada, ben, cy (did:key each, key packages published)")

        let secret = "Quarterly plan: ship the encrypted editor"
        let created = try DocumentBundle.create(at: ada.bundle, device: ada.device, title: "Plan")
        try created.insert(secret + ".", at: 0)
        let adaDoc = try await SharedDocument.share(bundleAt: ada.bundle, device: ada.device, account: ada.account)
        try await adaDoc.invite([ben.account.did, cy.account.did])
        let benDoc = try await SharedDocument.join(convoId: adaDoc.convoId, account: ben.account, bundleAt: ben.bundle, device: ben.device)
        let cyDoc = try await SharedDocument.join(convoId: adaDoc.convoId, account: cy.account, bundleAt: cy.bundle, device: cy.device)
        let members = try await adaDoc.members()
        report.say("shared and joined:        convo \(adaDoc.convoId.prefix(12))…, epoch \(members.epoch), 3 members")
        try report.check("shared, invited, joined", members.members.count == 3, "MLS group of \(members.members.count) at epoch \(members.epoch), one Welcome per new member")
        report.progress("concurrent edits, one person offline")

        // Concurrent edits; Cy is offline for a while and edits anyway.
        try await adaDoc.edit { try $0.insert(" Ada: draft the launch note.", at: try $0.text().count) }
        try await benDoc.edit { try $0.insert("[Ben] ", at: 0) }
        try await cyDoc.edit { try $0.insert(" Cy (offline): check the numbers.", at: try $0.text().count) }
        try await adaDoc.push()
        try await benDoc.push()
        try await adaDoc.pull()
        try await benDoc.pull()
        report.say("ada and ben, online:      \(try await adaDoc.text().debugDescription)")
        try await cyDoc.pull() // back online: catches up, then sends what it wrote offline
        try await cyDoc.push()
        for doc in [adaDoc, benDoc] { try await doc.pull() }
        let texts = [try await adaDoc.text(), try await benDoc.text(), try await cyDoc.text()]
        report.say("cy back online, merged:   \(texts[0].debugDescription)\(Set(texts).count == 1 ? " (same on all three)" : "")")
        try report.check("concurrent edits merge", Set(texts).count == 1, Set(texts).count == 1 ? "three copies equal after an offline edit" : "the copies differ: \(texts)")

        // A figure travels too: encrypted with a key of its own, fetched by Ben when he opens it.
        let figurePath = root + "/figure.svg"
        let figure = Array("<svg><text>\(secret)</text></svg>".utf8) + (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(figure).write(to: URL(fileURLWithPath: figurePath))
        let figureID = try await adaDoc.edit { try $0.addAsset(contentsOf: figurePath, name: "figure.svg") }
        let sharedFigure = try await adaDoc.push()
        try await benDoc.pull()
        let fetched = try await benDoc.fetchAsset(figureID)
        let benFigure = try DocumentBundle.open(at: ben.bundle, device: ben.device).store.assets.path(of: figureID)
        let sameBytes = fetched && FileManager.default.contents(atPath: benFigure) == Data(figure)
        report.say("figure shared:            \(figure.count) bytes, encrypted (\(sharedFigure.assets) asset), fetched by ben on demand: \(sameBytes ? "identical" : "DIFFERENT")")
        try report.check("a figure travels encrypted", sameBytes && sharedFigure.assets == 1,
                         "ada's push uploaded the figure as attachment records under a key only members get; ben fetched and verified it")

        // Presence: where Ben's caret is reaches Ada at once, relayed and stored by nobody.
        let caret = try await benDoc.text().count
        let seen = try await withThrowingTaskGroup(of: (PresenceUpdate, Int?)?.self) { tasks in
            tasks.addTask {
                for try await update in adaDoc.presenceUpdates() {
                    guard let cursor = update.cursor else { return (update, nil) }
                    return (update, try await adaDoc.index(of: cursor))
                }
                return nil
            }
            tasks.addTask {
                // Resent until Ada's stream is open (a presence nobody watches reaches nobody).
                for _ in 0..<100 {
                    try await benDoc.sendPresence(at: caret)
                    try await Task.sleep(for: .milliseconds(50))
                }
                return nil
            }
            defer { tasks.cancelAll() }
            return try await tasks.next() ?? nil
        }
        let presenceOK = seen?.0.did == ben.account.did && seen?.1 == caret
        if presenceOK { report.say("presence:                 ada sees ben editing at \(caret) (end of the text), sealed in the epoch, stored nowhere") }
        try report.check("presence reaches the others", presenceOK,
                         "ben's caret, encrypted under the epoch's key and signed, relayed by the Delivery Service without being stored")

        // Previews: while Ben is live, Ada's edit shows in his view as she makes it, sealed in
        // the epoch and relayed without being stored; the durable copy follows with her push.
        report.progress("an edit shows before it is pushed")
        let (benPresence, benPresenceSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let benLive = Task {
            for try await event in benDoc.live(pollInterval: .milliseconds(50)) {
                if case .presence = event { benPresenceSink.yield() }
            }
        }
        defer { benLive.cancel() }
        // Ben's live stream is open once Ada's presence reaches it (a message sent to nobody
        // is lost, by design).
        try await firstOf(seconds: 20, "ben's live stream did not open") {
            var seen = benPresence.makeAsyncIterator()
            _ = await seen.next()
        } while: {
            try await adaDoc.sendPresence(at: 0)
        }
        let benView = await benDoc.patches()
        let durableBefore = await benDoc.status().processedSeq
        let clock = ContinuousClock(), editStart = clock.now
        let typed = " Ada, live: figures by Friday."
        try await adaDoc.edit { try $0.insert(typed, at: try $0.text().count) }
        try await firstOf(seconds: 20, "ada's edit did not reach ben's view") {
            var grown = 0
            for await batch in benView where batch.origin == .remote {
                for case let .splice(_, _, text) in batch.patches { grown += text.count }
                if grown >= typed.count { return }
            }
        }
        let shownAfter = clock.now - editStart
        let benShows = try await benDoc.text().contains(typed)
        let nothingSequenced = await benDoc.status().processedSeq == durableBefore
        let previewsApplied = await benDoc.appliedPreviews
        let previewed = benShows && nothingSequenced && previewsApplied >= 1
        guard let previewedSeq = try await adaDoc.push().seq else { throw DemoReport.Failure(description: "ada's edit was not sent") }
        try await firstOf(seconds: 20, "ben did not receive ada's durable copy") {
            while await benDoc.status().processedSeq < previewedSeq { try await Task.sleep(for: .milliseconds(20)) }
        }
        benLive.cancel()
        _ = await benLive.result
        let durable = try DocumentBundle.open(at: ben.bundle, device: ben.device).text().contains(typed)
        let shownMs = Double(shownAfter.components.attoseconds) / 1e15 + Double(shownAfter.components.seconds) * 1000
        if previewed && durable {
            report.say(String(format: "edit to ben's view:       %.1f ms, before ada pushed (a preview sealed in the epoch); her push made it durable", shownMs))
        }
        try report.check("an edit shows before its push", previewed && durable,
                         String(format: "ben's view showed ada's edit %.1f ms after she made it, with nothing sequenced yet; the push then reached his bundle", shownMs))

        // Sharing the current state only: a joiner gets the text, not what was deleted before.
        report.progress("sharing the current state only")
        let deleted = "first offer: 40 percent"
        let offerPath = root + "/offer.imprint", benOfferPath = root + "/ben-offer.imprint"
        let offer = try DocumentBundle.create(at: offerPath, device: ada.device, title: "Offer")
        try offer.insert("Terms: as agreed.", at: 0)
        try offer.insert(" (" + deleted + ")", at: 17)
        let withDeleted = offer.document.currentHeads
        try offer.delete(at: 17, count: deleted.count + 3)
        let offerDoc = try await SharedDocument.share(bundleAt: offerPath, device: ada.device, account: ada.account, history: .redacted)
        try await offerDoc.invite([ben.account.did])
        let benOffer = try await SharedDocument.join(convoId: offerDoc.convoId, account: ben.account, bundleAt: benOfferPath, device: ben.device)
        let benOfferDisk = try DocumentBundle.open(at: benOfferPath, device: ben.device)
        let benOld = try benOfferDisk.document.text(benOfferDisk.body, at: withDeleted)
        let adaOld = try offer.document.text(offer.body, at: withDeleted)
        let currentOnly = try await benOffer.text() == "Terms: as agreed." && !benOld.contains(deleted)
            && benOld.contains(Document.redactedCharacter) && adaOld.contains(deleted)
        if currentOnly {
            report.say("current state shared:     ben reads \"Terms: as agreed.\"; at the old version his copy has \(benOld.filter { $0 == Document.redactedCharacter }.count) blanked characters where ada's has the deleted words")
        }
        try report.check("current state shared without deleted text", currentOnly,
                         "shared with --history current: ben's copy has the text and every edit's place, but not the words deleted before he joined; ada keeps her full history")

        // Cy is removed; what follows is unreadable to Cy and the servers refuse Cy.
        try await adaDoc.remove(cy.account.did)
        try await adaDoc.edit { try $0.insert(" (Cy has moved on.)", at: try $0.text().count) }
        try await adaDoc.push()
        try await benDoc.pull()
        var refused = false
        do {
            try await cyDoc.pull()
        } catch let error as SyncError where error.code == .removed {
            refused = true
        }
        let cyText = try await cyDoc.text()
        let benText = try await benDoc.text()
        let cutOff = refused && !cyText.contains("moved on") && benText.contains("moved on")
        if cutOff { report.say("cy removed:               ben reads the next edit; cy is refused and its copy stops at the removal") }
        try report.check("removed member cut off", cutOff, "after the removal commit, ben reads the next edit; cy is refused (\(refused)) and reads nothing new")

        // Compaction: once Ada and Ben have read a snapshot, the zone drops the change sets
        // before it (Cy, removed, holds nothing back); the history lives on in the snapshot.
        report.progress("compaction")
        func zoneRecords() async throws -> Int {
            guard let zones = ada.account.zones as? HTTPZoneStore else { return -1 }
            return try await zones.usage().zones.first { $0.zoneId == "doc_" + adaDoc.convoId }?.records ?? -1
        }
        let recordsBefore = try await zoneRecords()
        _ = try await adaDoc.compact()
        try await benDoc.pull()
        let compaction = try await adaDoc.compact()
        try await benDoc.pull()
        let recordsAfter = try await zoneRecords()
        let adaFinal = try await adaDoc.text(), benFinal = try await benDoc.text()
        let intact = adaFinal == benFinal && benFinal.contains("Cy (offline)")
        let compacted = (compaction.zone?.deletedRecords ?? 0) > 0 && recordsAfter < recordsBefore && intact
        if compacted {
            report.say("compaction:               the zone went from \(recordsBefore) to \(recordsAfter) records; both copies keep every edit")
        }
        try report.check("compaction frees the zone", compacted,
                         "ada and ben acknowledged a snapshot; the server deleted \(compaction.zone?.deletedRecords ?? 0) change and commit records below it (\(recordsBefore) → \(recordsAfter) records), and the text is intact")

        // Ben keeps his records on a zone server of his own: Ada's next message lands there,
        // written through a capability only the group's current members can derive.
        report.progress("ben's own server")
        let own = try await DemoServer.start(directory: root + "/own-server")
        defer { own.task.cancel() }
        let benOwn = try await ben.account.registerStorage(StorageProvider(type: "zone-http", endpoint: own.url))
        let benAgain = try await SharedDocument.open(bundleAt: ben.bundle, device: ben.device, account: benOwn)
        try await benAgain.pull()  // registers this epoch's capability on his server
        try await adaDoc.edit { try $0.insert(" Ben's server has it.", at: try $0.text().count) }
        guard let viaOwn = try await adaDoc.push().seq else { throw DemoReport.Failure(description: "ada's edit was not sent") }
        await adaDoc.finishInboxCopies()
        let ownZones = try await benOwn.endpoints.store(at: own.url)
        let inboxBefore = try await ownZones.fetchChanges(zoneId: "inbox_\(benOwn.did)", since: nil, limit: 100).records.filter { !$0.deleted }
        try await benAgain.pull()
        let inboxAfter = try await ownZones.fetchChanges(zoneId: "inbox_\(benOwn.did)", since: nil, limit: 100).records.filter { !$0.deleted }
        let benNow = try await benAgain.text(), adaNow = try await adaDoc.text()
        let delivered = inboxBefore.map(\.recordName) == ["\(adaDoc.convoId)-\(viaOwn).0"] && inboxAfter.isEmpty && benNow == adaNow
        if delivered { report.say("ben's own server:         ada's edit reached ben's inbox on \(own.url); ben read it there and cleared it") }
        try report.check("a member's own server", delivered,
                         "ben registered storage on a second server; ada's copy went to his inbox there, presenting the epoch's write capability, and ben read it from there")

        // What the servers hold: search every byte they stored for the document's words.
        let needle = Array("ship the encrypted editor".utf8)  // in the text and in the figure
        var files = 0, bytes = 0, found = false
        for directory in [root + "/server", root + "/own-server"] {
            guard let walker = FileManager.default.enumerator(atPath: directory) else { continue }
            while let relative = walker.nextObject() as? String {
                guard let data = FileManager.default.contents(atPath: directory + "/" + relative) else { continue }
                files += 1
                bytes += data.count
                if data.range(of: Data(needle)) != nil { found = true }
            }
        }
        if !found { report.say("servers stored:           \(bytes) bytes in \(files) files; the words \"ship the encrypted editor\" appear in none") }
        try report.check("no plaintext on the server", !found, "\(bytes) bytes in \(files) files of both servers scanned for the document's words: \(found ? "FOUND" : "none")")

        try await own.stop()
        try await main.stop()
    }

    /// Runs `body` until it returns, running `repeating` every 50 ms meanwhile (if given);
    /// fails with `failure` after `seconds`.
    static func firstOf(seconds: Int, _ failure: String, _ body: @escaping @Sendable () async throws -> Void,
                        while repeating: (@Sendable () async throws -> Void)? = nil) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await body()
                return true
            }
            group.addTask {
                let deadline = ContinuousClock.now + .seconds(seconds)
                while ContinuousClock.now < deadline {
                    try await repeating?()
                    try await Task.sleep(for: .milliseconds(50))
                }
                return false
            }
            defer { group.cancelAll() }
            guard try await group.next() == true else { throw DemoReport.Failure(description: failure) }
        }
    }
}

/// A Delivery Service and zone service started in this process on a free loopback port,
/// SQLite and asset files in `directory`.
struct DemoServer {
    let url: String
    let group: ServiceGroup
    let task: Task<Void, any Error>
    let store: any DeliveryStore
    let zones: ZoneService

    static func start(directory: String) async throws -> DemoServer {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var logger = Logger(label: "imprint-demo-server")
        logger.logLevel = .critical
        let store = try await StoreFactory.open(.sqlite(path: directory + "/delivery.sqlite"), logger: logger)
        let zones = try await ZoneService.open(delivery: store, dataDirectory: URL(fileURLWithPath: directory, isDirectory: true),
                                               configuration: ZoneServiceConfiguration())
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = DeliveryServer.makeApplication(
            store: store, configuration: DeliveryServerConfiguration(serviceDID: "did:web:demo.local", host: "127.0.0.1", port: 0),
            logger: logger, services: [zones]) { port in
                portSink.yield(port)
                portSink.finish()
            }
        let group = ServiceGroup(configuration: .init(services: [.init(service: app)], logger: logger))
        let task = Task { try await group.run() }
        var portIterator = ports.makeAsyncIterator()
        guard let port = await portIterator.next() else {
            task.cancel()
            throw DemoReport.Failure(description: "a demo server did not start")
        }
        return DemoServer(url: "http://127.0.0.1:\(port)", group: group, task: task, store: store, zones: zones)
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
        try await zones.shutdown()
        try await store.shutdown()
    }
}

