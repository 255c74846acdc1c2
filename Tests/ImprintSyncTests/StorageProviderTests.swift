import Foundation
import Synchronization
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
@testable import ImprintSync
import ImprintTestSupport
import ImprintZones
import ImprintZoneService
import Testing

/// Storage providers per user (`registerStorage`): members who keep their inbox on a zone
/// server of their own receive every message there, written by senders who share no convo
/// with them on that server (they present the inbox write capability of the group's current
/// epoch); members spread over two real servers on loopback converge; a removed member's
/// capability stops working; copies for a server that was down reach it from the senders'
/// durable state once it is back. The document's server runs on each store kind; the
/// members' own server is SQLite, the embedded default.
extension SyncSuites {
@Suite struct StorageProviderTests {
    /// A member's own zone server (Delivery Service and zone service, SQLite) in `directory`,
    /// started again on the same `port` with the same data after a stop.
    static func startOwnServer(in directory: String, port: Int = 0) async throws -> RunningServer {
        try FileManager.default.createDirectory(atPath: directory + "/zones", withIntermediateDirectories: true)
        let store = try await StoreFactory.open(.sqlite(path: directory + "/delivery.sqlite"), logger: testLogger)
        let zones = try await ZoneService.open(delivery: store, dataDirectory: URL(fileURLWithPath: directory + "/zones"),
                                               configuration: ZoneServiceConfiguration(), heartbeat: .seconds(1))
        return try await RunningServer.start(store: store, services: [zones]) { $0.port = port }
    }

    /// `person` with its records going to `endpoint` from now on.
    static func registering(_ person: Person, at endpoint: String) async throws -> Person {
        let account = try await person.account.registerStorage(StorageProvider(type: "zone-http", endpoint: endpoint))
        return Person(name: person.name, account: account, device: person.device, bundlePath: person.bundlePath)
    }

    /// The live record names of `person`'s inbox on its own server.
    static func ownInbox(_ person: Person) async throws -> [String] {
        let endpoint = try #require(person.account.storage?.endpoint)
        let zones = try await person.account.endpoints.store(at: endpoint)
        var names: [String] = [], token: ZoneChangeToken?
        while true {
            let batch = try await zones.fetchChanges(zoneId: "inbox_\(person.did)", since: token, limit: 1000)
            names += batch.records.filter { !$0.deleted }.map(\.recordName)
            token = batch.changeToken
            if !batch.moreComing { return names.sorted() }
        }
    }

    /// Runs `body` with the document's server of `kind` and a member's own server, stopping both.
    static func withTwoServers(_ kind: StoreKind, _ body: (SyncTestServer, RunningServer, String) async throws -> Void) async throws {
        try await SyncTestServer.with(kind) { server in
            let directory = server.directory.file("own-server")
            let own = try await startOwnServer(in: directory)
            do {
                try await body(server, own, directory)
                try await own.stop()
            } catch {
                try? await own.stop()
                throw error
            }
        }
    }

    @Test(arguments: StoreKind.available)
    func membersSpreadOverTwoServersReceiveThroughTheirOwn(kind: StoreKind) async throws {
        let seed = testSeed("StorageProviderTests.spread.\(kind)", fallback: 0x5702)
        var rng = SplitMix64(seed: seed)
        try await Self.withTwoServers(kind) { server, own, ownDirectory in
            let ada = try await server.person("ada"), dan = try await server.person("dan")
            let ben = try await Self.registering(try await server.person("ben"), at: own.baseURL)
            let cy = try await Self.registering(try await server.person("cy"), at: own.baseURL + "/")
            #expect(try SyncAccount.registeredStorage(in: cy.account.home)?.endpoint == own.baseURL, "stored without the trailing slash")
            try ada.createBundle(text: "Start.")
            let adaDoc = try await ada.share()
            try await adaDoc.invite([ben.did, cy.did, dan.did])
            let docs = [adaDoc, try await ben.join(adaDoc.convoId), try await cy.join(adaDoc.convoId), try await dan.join(adaDoc.convoId)]
            for doc in docs { _ = try await doc.pull() }
            // A small message: one copy into each own-server inbox, none on the document's server.
            let marker = "ADA-MARKER-71c2"
            try ada.edit { try $0.insert(" \(marker)", at: 0) }
            let small = try #require(try await adaDoc.push().seq)
            #expect(try await Self.ownInbox(ben) == ["\(adaDoc.convoId)-\(small).0"], "seed \(seed)")
            #expect(try await Self.ownInbox(cy) == ["\(adaDoc.convoId)-\(small).0"])
            #expect(try await dan.liveRecords(in: "inbox_\(dan.did)").isEmpty, "dan reads the shared zone only")
            // A large message, chunked into several records in each inbox.
            let big = (0..<60_000).map { _ in String(UInt8.random(in: 0...255, using: &rng), radix: 16) }.joined()
            try dan.edit { try $0.insert(" DAN-MARKER-0c9e \(big)", at: 0) }
            func uploadedToOwn() async throws -> Double {
                try await RawHTTP.metric(own, #"imprint_http_request_body_bytes_total{route="zone.uploadAsset"}"#) ?? 0
            }
            let uploadedBefore = try await uploadedToOwn()
            let largeReport = try await docs[3].push()
            let large = try #require(largeReport.seq)
            // Over the inline limit: uploaded once into the first inbox there, presenting its
            // capability, and named in both inboxes by one fan-out (zone API v1.4).
            #expect(largeReport.bytes > ZoneLimits.inlineAssetBytes)
            let uploaded = try await uploadedToOwn() - uploadedBefore
            #expect(uploaded >= Double(largeReport.bytes) && uploaded < 2 * Double(largeReport.bytes),
                    "\(uploaded) bytes uploaded to the members' server for one \(largeReport.bytes)-byte message to two inboxes")
            let chunks = try await Self.ownInbox(ben).filter { $0.hasPrefix("\(adaDoc.convoId)-\(large).") }
            #expect(chunks == ["\(adaDoc.convoId)-\(large).0"])
            #expect(try await Self.ownInbox(cy).filter { $0.hasPrefix("\(adaDoc.convoId)-\(large).") } == chunks)
            // Readers read their own inbox and clear it.
            _ = try await docs[1].pull()
            #expect(try ben.text().contains(marker) && ben.text().contains("DAN-MARKER-0c9e"))
            #expect(try await Self.ownInbox(ben).isEmpty, "ben read both copies from his inbox and cleared it")
            #expect(try await Self.ownInbox(cy).count == 1 + chunks.count, "cy has not pulled yet")
            // ben answers; everyone converges.
            try ben.edit { try $0.insert(" BEN-MARKER-4a11", at: 0) }
            try await docs[1].push()
            for doc in docs { _ = try await doc.pull() }
            let text = try ada.text()
            for person in [ben, cy, dan] { #expect(try person.text() == text, "\(person.name) differs; seed \(seed)") }
            #expect(try await Self.ownInbox(cy).isEmpty)
            // The members' own server holds ciphertext only.
            let stored = NoPlaintextOnServerTests.files(under: ownDirectory)
            #expect(!stored.isEmpty)
            for planted in [marker, "DAN-MARKER-0c9e", "BEN-MARKER-4a11"] {
                for form in NoPlaintextOnServerTests.encodings(of: planted) {
                    for file in stored where NoPlaintextOnServerTests.contains(file.bytes, form) {
                        Issue.record("\(planted) found in \(file.name) on the member's own server")
                    }
                }
            }
        }
    }

    @Test(arguments: StoreKind.available)
    func aRemovedMembersCapabilityStopsWorking(kind: StoreKind) async throws {
        try await Self.withTwoServers(kind) { server, own, _ in
            let ada = try await server.person("ada"), cy = try await server.person("cy")
            let ben = try await Self.registering(try await server.person("ben"), at: own.baseURL)
            try ada.createBundle(text: "Start.")
            let adaDoc = try await ada.share()
            try await adaDoc.invite([ben.did, cy.did])
            let benDoc = try await ben.join(adaDoc.convoId), cyDoc = try await cy.join(adaDoc.convoId)
            for doc in [adaDoc, benDoc, cyDoc] { _ = try await doc.pull() }
            // cy, still a member, derives ben's capability and may append with it.
            let held = try await cyDoc.inboxCapability(of: ben.did)
            let asCy = try await cy.account.endpoints.store(at: own.baseURL).presenting(inboxCapability: held)
            let junk = { (name: String) in
                ZoneRecordDraft(recordName: name, recordType: "change", fields: ZoneRecordFields(), asset: .inline(Array("junk".utf8)))
            }
            _ = try await asCy.saveRecords(zoneId: "inbox_\(ben.did)", [junk("probe-1.0")])
            try await adaDoc.remove(cy.did)
            _ = try await benDoc.pull()  // ben registers the new epoch's capability
            await #expect(throws: ZoneError.self) { _ = try await asCy.saveRecords(zoneId: "inbox_\(ben.did)", [junk("probe-2.0")]) }
            do {
                _ = try await asCy.saveRecords(zoneId: "inbox_\(ben.did)", [junk("probe-3.0")])
            } catch let error as ZoneError {
                #expect(error.code == .forbidden)
            }
            // The remaining members still reach ben's inbox with the new one.
            try ada.edit { try $0.insert(" after-removal", at: 0) }
            let seq = try #require(try await adaDoc.push().seq)
            #expect(try await Self.ownInbox(ben).contains("\(adaDoc.convoId)-\(seq).0"))
            _ = try await benDoc.pull()
            #expect(try ben.text() == ada.text())
            // Ben himself removed: his client withdraws the document's capability from his server.
            let adaHeld = try await adaDoc.inboxCapability(of: ben.did)
            let asAda = try await ada.account.endpoints.store(at: own.baseURL).presenting(inboxCapability: adaHeld)
            _ = try await asAda.saveRecords(zoneId: "inbox_\(ben.did)", [junk("probe-4.0")])
            try await adaDoc.remove(ben.did)
            await #expect(throws: SyncError.self) { _ = try await benDoc.pull() }
            await #expect(throws: ZoneError.self) { _ = try await asAda.saveRecords(zoneId: "inbox_\(ben.did)", [junk("probe-5.0")]) }
        }
    }

    /// A large message reaches a recipients' own server once even when the inbox it would
    /// first go into is gone: the next inbox there holds the chunks, and every other inbox's
    /// records reference them. The refused upload's body travels too (HTTP sends it before
    /// the answer comes), so two uploads in all, where one upload per inbox (four here) plus
    /// the refused one would be five.
    @Test(arguments: StoreKind.available)
    func aLargeMessageIsUploadedOnceWhenTheFirstInboxThereIsGone(kind: StoreKind) async throws {
        let seed = testSeed("StorageProviderTests.holderGone.\(kind)", fallback: 0x5703)
        var rng = SplitMix64(seed: seed)
        try await Self.withTwoServers(kind) { server, own, _ in
            let ada = try await server.person("ada")
            var members: [Person] = []
            for name in ["ben", "cy", "eve", "fay"] { members.append(try await Self.registering(try await server.person(name), at: own.baseURL)) }
            try ada.createBundle(text: "Start.")
            let adaDoc = try await ada.share()
            try await adaDoc.invite(members.map(\.did))
            var docs = [adaDoc]
            for member in members { docs.append(try await member.join(adaDoc.convoId)) }
            for doc in docs { _ = try await doc.pull() }
            // The inbox tried first (the smallest DID) is deleted by its owner.
            let first = try #require(members.min { $0.did < $1.did })
            let others = members.filter { $0.did != first.did }
            try await first.account.endpoints.store(at: own.baseURL).deleteZone("inbox_\(first.did)")
            func uploadedToOwn() async throws -> Double {
                try await RawHTTP.metric(own, #"imprint_http_request_body_bytes_total{route="zone.uploadAsset"}"#) ?? 0
            }
            let before = try await uploadedToOwn()
            let big = (0..<60_000).map { _ in String(UInt8.random(in: 0...255, using: &rng), radix: 16) }.joined()
            try ada.edit { try $0.insert(" ADA-LARGE-55d1 \(big)", at: 0) }
            let report = try await adaDoc.push()
            let seq = try #require(report.seq)
            #expect(report.bytes > ZoneLimits.inlineAssetBytes)
            let uploaded = try await uploadedToOwn() - before
            #expect(uploaded >= 2 * Double(report.bytes) && uploaded < 3 * Double(report.bytes),
                    "\(uploaded) bytes uploaded for one \(report.bytes)-byte message to \(others.count) inboxes; seed \(seed)")
            for member in others {
                #expect(try await Self.ownInbox(member).contains { $0.hasPrefix("\(adaDoc.convoId)-\(seq).") }, "\(member.name)'s copy")
            }
            // Nothing is retried for the deleted inbox: its owner reads the shared zone.
            #expect(await adaDoc.state.inboxPending.isEmpty)
            for doc in docs { _ = try await doc.pull() }
            for member in members { #expect(try member.text() == ada.text(), "\(member.name) differs; seed \(seed)") }
        }
    }

    /// `uploadOnce` tries inboxes in DID order, at most `MailboxPolicy.uploadHolderAttempts`,
    /// and tells each refusal apart: a missing inbox is gone, a refused capability retried.
    @Test func theUploadHolderIsTheFirstInboxThatTakesTheChunks() async throws {
        let refusals: [String: ZoneError] = ["did:key:a": ZoneError(.zoneNotFound), "did:key:b": ZoneError(.forbidden)]
        let tried = Mutex<[String]>([])
        let upload: (String, [UInt8]) async throws -> Void = { did, _ in
            tried.withLock { $0.append(did) }
            if let refusal = refusals[did] { throw refusal }
        }
        let taken = try await SharedDocument.uploadOnce([[1], [2]], candidates: ["did:key:c", "did:key:b", "did:key:a"], upload: upload)
        #expect(taken.holder == "did:key:c")
        #expect(taken.refused == ["did:key:a": .gone, "did:key:b": .failed])
        #expect(tried.withLock { $0 } == ["did:key:a", "did:key:b", "did:key:c", "did:key:c"])
        tried.withLock { $0 = [] }
        let none = try await SharedDocument.uploadOnce([[1]], candidates: ["did:key:a", "did:key:b", "did:key:a", "did:key:d"], upload: upload)
        #expect(none.holder == nil, "three refusals: the fourth is not tried")
        #expect(tried.withLock { $0 }.count == MailboxPolicy.uploadHolderAttempts)
    }

    /// A recipient's own server that is slow (here: its database is held by another writer,
    /// so its saves wait) holds up neither the sender's push nor the other recipients' copies:
    /// the push returns once `inboxCopyWait` has passed, with the slow server's copy still on
    /// its way and durably queued; the next push does not wait for that server again; when the
    /// server is back to speed, the copies arrive in order and the recipient converges.
    @Test(arguments: StoreKind.available)
    func aSlowOwnServerHoldsUpNeitherThePushNorTheOtherRecipients(kind: StoreKind) async throws {
        try await Self.withTwoServers(kind) { server, own, ownDirectory in
            var quick = SyncOptions()
            quick.inboxCopyWait = .milliseconds(300)
            let ada = try await server.person("ada", options: quick)
            let ben = try await Self.registering(try await server.person("ben"), at: own.baseURL)
            let cy = try await server.person("cy")
            try ada.createBundle(text: "Start.")
            let adaDoc = try await SharedDocument.share(bundleAt: ada.bundlePath, device: ada.device, account: ada.account,
                                                        mailboxThreshold: 1)
            try await adaDoc.invite([ben.did, cy.did])
            let benDoc = try await ben.join(adaDoc.convoId), cyDoc = try await cy.join(adaDoc.convoId)
            for doc in [adaDoc, benDoc, cyDoc] { _ = try await doc.pull() }  // ben's capability reaches his server

            // Another writer holds ben's server's database: every save there waits (up to the
            // server's 10 s busy timeout).
            let lock = try HeldWriteLock(path: ownDirectory + "/delivery.sqlite")
            var released = false
            defer { if !released { lock.release() } }

            try ada.edit { try $0.insert(" SLOW-1", at: 0) }
            let first = try #require(try await adaDoc.push().seq)
            var status = await adaDoc.status()
            #expect(status.inboxCopiesPending == 1 && status.inboxCopiesInFlight == 1,
                    "ben's copy is on its way, not failed or waited for: \(status.inboxCopiesPending) pending, \(status.inboxCopiesInFlight) in flight")
            try ada.edit { try $0.insert(" SLOW-2", at: 0) }
            let second = try #require(try await adaDoc.push().seq)
            status = await adaDoc.status()
            #expect(status.inboxCopiesPending == 2 && status.inboxCopiesInFlight == 1, "the second copy waits for the courier on its way")
            // cy's copies, on the document's server, arrived meanwhile (the lock is still held).
            let cyInbox = try await cy.liveRecords(in: "inbox_\(cy.did)").map(\.recordName).sorted()
            #expect(cyInbox == ["\(adaDoc.convoId)-\(first).0", "\(adaDoc.convoId)-\(second).0"].sorted())

            lock.release()
            released = true
            // The late courier arrives, records its copy and takes the second. (On a machine so
            // loaded that a save outwaited the busy timeout, the copy failed and stays queued:
            // the next push carries it.)
            for _ in 0..<5 {
                await adaDoc.finishInboxCopies()
                if await adaDoc.status().inboxCopiesPending == 0 { break }
                _ = try await adaDoc.push()
            }
            #expect(await adaDoc.status().inboxCopiesPending == 0)
            #expect(try await Self.ownInbox(ben) == ["\(adaDoc.convoId)-\(first).0", "\(adaDoc.convoId)-\(second).0"].sorted())
            _ = try await benDoc.pull()
            #expect(try ben.text() == ada.text() && ben.text().contains("SLOW-2"))
            #expect(try await Self.ownInbox(ben).isEmpty, "ben read his copies from his own server")
        }
    }

    @Test(arguments: StoreKind.available)
    func anOwnServerThatWasDownGetsItsCopiesFromTheSendersDurableState(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let directory = server.directory.file("own-server")
            var own = try await Self.startOwnServer(in: directory)
            let port = own.port
            do {
                let ada = try await server.person("ada")
                let ben = try await Self.registering(try await server.person("ben"), at: own.baseURL)
                try ada.createBundle(text: "Start.")
                let adaDoc = try await ada.share()
                try await adaDoc.invite([ben.did])
                let benDoc = try await ben.join(adaDoc.convoId)
                for doc in [adaDoc, benDoc] { _ = try await doc.pull() }

                try await own.stop()
                // While ben's server is down: ada's copies wait in her sync state; ben, pulling
                // meanwhile, reads the shared zone and misses nothing.
                try ada.edit { try $0.insert(" while-down-1", at: 0) }
                let first = try #require(try await adaDoc.push().seq)
                _ = try await benDoc.pull()
                #expect(try ben.text().contains("while-down-1"))
                try ada.edit { try $0.insert(" while-down-2", at: 0) }
                let second = try #require(try await adaDoc.push().seq)
                #expect(first < second)

                // Ada's process ends; her copies survive in her sync state.
                own = try await Self.startOwnServer(in: directory, port: port)
                let adaAgain = try await ada.open()
                _ = try await adaAgain.push()  // nothing new to send: delivers what is owed

                // The first copy is dropped (ben has processed it), the second delivered.
                #expect(try await Self.ownInbox(ben) == ["\(adaDoc.convoId)-\(second).0"])
                _ = try await benDoc.pull()
                #expect(try ben.text() == ada.text())
                #expect(try await Self.ownInbox(ben).isEmpty)
                try await own.stop()
            } catch {
                try? await own.stop()
                throw error
            }
        }
    }
}
}
