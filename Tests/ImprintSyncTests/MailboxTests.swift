import Crypto
import Foundation
import ImprintEncoding
import ImprintServerTestSupport
import ImprintSync
import ImprintTestSupport
import ImprintZones
import Testing

/// Mailbox delivery (`MailboxPolicy`): past the document's threshold every message is also
/// saved into each recipient's inbox zone and recipients read it from there; crossing the
/// threshold either way loses and repeats nothing; an inbox copy that failed is retried from
/// the sender's sync state after a restart. Every case on SQLite and PostgreSQL.
extension SyncSuites {
@Suite struct MailboxTests {
    /// Live records of `person`'s inbox, by name (the owner reads its inbox).
    static func inbox(_ person: Person) async throws -> [String] {
        try await person.liveRecords(in: "inbox_\(person.did)").map(\.recordName).sorted()
    }

    /// alice shares a document with a mailbox threshold of 2 and bob and carol join it.
    static func threeMembersPastAThresholdOfTwo(_ server: SyncTestServer) async throws
        -> (Person, Person, Person, SharedDocument, SharedDocument, SharedDocument) {
        let alice = try await server.person("alice"), bob = try await server.person("bob"), carol = try await server.person("carol")
        try alice.createBundle(text: "Start.")
        let aliceDoc = try await SharedDocument.share(bundleAt: alice.bundlePath, device: alice.device, account: alice.account,
                                                      mailboxThreshold: 2)
        try await aliceDoc.invite([bob.did, carol.did])
        let bobDoc = try await bob.join(aliceDoc.convoId)
        let carolDoc = try await carol.join(aliceDoc.convoId)
        return (alice, bob, carol, aliceDoc, bobDoc, carolDoc)
    }

    @Test(arguments: StoreKind.available)
    func recordsReachEveryInboxAndReceiversReadThemFromThere(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let (alice, bob, carol, aliceDoc, bobDoc, carolDoc) = try await Self.threeMembersPastAThresholdOfTwo(server)
            try alice.edit { try $0.insert(" mailbox-1", at: 0) }
            let sent = try #require(try await aliceDoc.push().seq)
            let copy = "\(aliceDoc.convoId)-\(sent).0"
            #expect(try await Self.inbox(bob) == [copy])
            #expect(try await Self.inbox(carol) == [copy])
            _ = try await bobDoc.pull()
            #expect(try bob.text().contains("mailbox-1"))
            #expect(try await Self.inbox(bob).isEmpty, "bob read the copy from his inbox and cleared it")
            #expect(try await Self.inbox(carol) == [copy], "carol has not pulled yet")
            _ = try await carolDoc.pull()
            #expect(try carol.text() == alice.text() && bob.text() == alice.text())
            #expect(try await Self.inbox(carol).isEmpty)
        }
    }

    /// A message too large to travel inline reaches the server once, for the shared zone: every
    /// inbox's chunk records reference the asset the sender's shared-zone record holds (zone
    /// API v1.4), instead of one upload per recipient.
    @Test(arguments: StoreKind.available)
    func aLargeMessageIsUploadedOnceForEveryInbox(kind: StoreKind) async throws {
        let seed = testSeed("MailboxTests.large.\(kind)", fallback: 0x1A46E)
        var rng = SplitMix64(seed: seed)
        try await SyncTestServer.with(kind) { server in
            var people: [Person] = []
            for name in ["alice", "bob", "carol", "dave"] { people.append(try await server.person(name)) }
            let alice = people[0]
            try alice.createBundle(text: "Start.")
            let aliceDoc = try await SharedDocument.share(bundleAt: alice.bundlePath, device: alice.device, account: alice.account,
                                                          mailboxThreshold: 2)
            try await aliceDoc.invite(people.dropFirst().map(\.did))
            var docs: [SharedDocument] = []
            for person in people.dropFirst() { docs.append(try await person.join(aliceDoc.convoId)) }
            func uploaded() async throws -> Double {
                try await RawHTTP.metric(server.server, #"imprint_http_request_body_bytes_total{route="zone.uploadAsset"}"#) ?? 0
            }
            // Random letters: zstd cannot bring them under the 48 KiB inline limit.
            let letters = Array("abcdefghijklmnopqrstuvwxyz")
            let text = String((0..<150_000).map { _ in letters[Int.random(in: 0..<26, using: &rng)] })
            try alice.edit { try $0.insert(text, at: 0) }
            let before = try await uploaded()
            let sent = try #require(try await aliceDoc.push().seq)
            let sentBytes = try await uploaded() - before
            let record = try #require(try await alice.liveRecords(in: "doc_\(aliceDoc.convoId)").first { $0.fields.seq == Int64(sent) })
            #expect(record.asset.size > 48 * 1024, "seed \(seed): the message travelled inline")
            #expect(sentBytes >= Double(record.asset.size) && sentBytes < 2 * Double(record.asset.size),
                    "seed \(seed): \(sentBytes) bytes uploaded for a \(record.asset.size)-byte message to 3 inboxes")
            for person in people.dropFirst() {
                #expect(try await Self.inbox(person) == ["\(aliceDoc.convoId)-\(sent).0"])
            }
            for (person, doc) in zip(people.dropFirst(), docs) {
                _ = try await doc.pull()
                #expect(try person.text() == alice.text())
                #expect(try await Self.inbox(person).isEmpty, "\(person.did) read its copy from its inbox")
            }
        }
    }

    /// Any member can append to another's inbox, so a record planted there under the name of
    /// a seq to come, self-consistent but not the message, must not be taken for it: the
    /// receiver checks the copy against the hash the Delivery Service sequenced, counts it,
    /// reads the message from the shared zone and deletes the planted record.
    @Test(arguments: StoreKind.available)
    func aCopyPlantedUnderTheNameOfASeqToComeIsNotTakenForTheMessage(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let (alice, bob, carol, aliceDoc, bobDoc, carolDoc) = try await Self.threeMembersPastAThresholdOfTwo(server)
            try alice.edit { try $0.insert(" first", at: 0) }
            let first = try #require(try await aliceDoc.push().seq)
            _ = try await bobDoc.pull()
            // carol plants the next seq's record in bob's inbox: valid chunk fields, the junk's
            // own hash, so only the Delivery Service's hash tells it apart.
            let junk = Array("not the message".utf8)
            var fields = ZoneRecordFields(convoId: aliceDoc.convoId, epoch: 1, seq: Int64(first + 1))
            (fields.chunkIndex, fields.chunkCount, fields.payloadHash) = (0, 1, Hex.encode(SHA256.hash(data: junk)))
            let planted = "\(aliceDoc.convoId)-\(first + 1).0"
            let results = try await carol.account.zones.saveToInboxes([
                InboxSave(zoneId: "inbox_\(bob.did)", records: [ZoneRecordDraft(recordName: planted, recordType: "change", fields: fields,
                                                                                  asset: .inline(junk))])
            ])
            #expect(results.count == 1 && results[0].error == nil, "a co-member may append to the inbox: \(results)")
            try alice.edit { try $0.insert(" ALICE-MARKER-9b0e", at: 0) }
            let sent = try #require(try await aliceDoc.push().seq)
            #expect(sent == first + 1)
            _ = try await bobDoc.pull()
            #expect(try bob.text() == alice.text(), "bob read the message from the shared zone")
            #expect(await bobDoc.rejectedInboxCopies == 1)
            #expect(try await Self.inbox(bob).isEmpty, "the planted record was deleted with the copies read")
            _ = try await carolDoc.pull()
            #expect(try carol.text() == alice.text())
            #expect(await carolDoc.rejectedInboxCopies == 0)
        }
    }

    @Test(arguments: StoreKind.available)
    func crossingTheThresholdEitherWayLosesAndRepeatsNothing(kind: StoreKind) async throws {
        let seed = testSeed("MailboxTests.switch.\(kind)", fallback: 0xB0C5)
        var rng = SplitMix64(seed: seed)
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            let carol = try await server.person("carol"), dave = try await server.person("dave")
            try alice.createBundle(text: "")
            let aliceDoc = try await SharedDocument.share(bundleAt: alice.bundlePath, device: alice.device, account: alice.account,
                                                          mailboxThreshold: 3)
            try await aliceDoc.invite([bob.did])
            var docs = ["alice": aliceDoc, "bob": try await bob.join(aliceDoc.convoId)]
            var markers: [String] = []
            /// Each writer pushes a marker; `copies`: whether Bob's inbox then holds the others'.
            func round(_ writers: [Person], copies: Bool) async throws {
                for writer in writers {
                    let marker = "<\(writer.name)-\(UInt32.random(in: 0...UInt32.max, using: &rng))>"
                    markers.append(marker)
                    try writer.edit { try $0.insert(marker, at: 0) }
                    try await docs[writer.name]!.push()
                }
                let inBobs = try await Self.inbox(bob).count
                #expect(inBobs == (copies ? writers.count - 1 : 0), "bob's inbox holds \(inBobs) copies; seed \(seed)")
                for doc in docs.values { _ = try await doc.pull() }
            }
            try await round([alice, bob], copies: false)        // 2 members: shared zone only
            try await aliceDoc.invite([carol.did, dave.did])    // 4 > 3: inboxes
            docs["carol"] = try await carol.join(aliceDoc.convoId)
            docs["dave"] = try await dave.join(aliceDoc.convoId)
            // Each member makes its inbox when its client first sees the group past the
            // threshold; copies sent before that are not kept (the shared zone has them).
            for doc in docs.values { _ = try await doc.pull() }
            try await round([alice, bob, carol, dave], copies: true)
            try await docs["dave"]!.leave()                     // back to 3: shared zone only
            docs["dave"] = nil
            try await aliceDoc.update()                         // the next commit removes dave
            for doc in docs.values { _ = try await doc.pull() }
            try await round([alice, bob, carol], copies: false)
            let text = try alice.text()
            for marker in markers {
                #expect(text.components(separatedBy: marker).count == 2, "\(marker) appears once; seed \(seed)")
            }
            for person in [bob, carol] { #expect(try person.text() == text, "\(person.name); seed \(seed)") }
            for person in [alice, bob, carol] { #expect(try await Self.inbox(person).isEmpty, "\(person.name)'s inbox is cleared") }
        }
    }

    /// More copies than one `deleteRecords` takes (400) read in one pull are all cleared.
    /// The client-side batching is what is tested, so SQLite alone.
    @Test func aPullThatReadsManyCopiesClearsThemAll() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "")
            let aliceDoc = try await SharedDocument.share(bundleAt: alice.bundlePath, device: alice.device, account: alice.account,
                                                          mailboxThreshold: 1)
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            for n in 0..<(ZoneLimits.maximumBatchRecords + 5) {
                try alice.edit { try $0.insert("\(n) ", at: 0) }
                try await aliceDoc.push()
            }
            #expect(try await Self.inbox(bob).count == ZoneLimits.maximumBatchRecords + 5)
            _ = try await bobDoc.pull()
            #expect(try bob.text() == alice.text())
            #expect(try await Self.inbox(bob).isEmpty)
        }
    }

    /// A copy that lands in an inbox after its seq was processed from the shared zone (the
    /// race `live` runs into: the receiver pulls between the sender's shared-zone save and its
    /// inbox copy) is swept by the receiver's next pull, so inboxes do not fill with copies
    /// nobody reads.
    @Test(arguments: StoreKind.available)
    func aCopyThatLandsAfterItsSeqWasProcessedIsSwept(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let (alice, bob, _, aliceDoc, bobDoc, _) = try await Self.threeMembersPastAThresholdOfTwo(server)
            // Bob's copy of the next message fails for now: he reads it from the shared zone.
            let failing = FailingInboxZoneStore(alice.account.zones, failing: ["inbox_\(bob.did)"])
            let sender = try await SharedDocument.open(bundleAt: alice.bundlePath, device: alice.device, account: alice.account.with(zones: failing))
            try alice.edit { try $0.insert(" raced", at: 0) }
            let seq = try #require(try await sender.push().seq)
            _ = try await bobDoc.pull()
            #expect(try bob.text().contains("raced"))
            // The copy lands afterwards, as Alice's save would have a moment later.
            let copy = try await alice.liveRecords(in: "doc_\(aliceDoc.convoId)").first { $0.recordName == "\(aliceDoc.convoId)-\(seq).0" }
            let record = try #require(copy)
            let bytes = try await alice.account.zones.fetchAsset(zoneId: "doc_\(aliceDoc.convoId)", hash: record.asset.hash)
            _ = try await alice.account.zones.saveRecords(zoneId: "inbox_\(bob.did)", [
                ZoneRecordDraft(recordName: record.recordName, recordType: "change", fields: record.fields, asset: .inline(bytes)),
            ])
            #expect(try await Self.inbox(bob) == [record.recordName])
            _ = try await bobDoc.pull()
            #expect(try await Self.inbox(bob).isEmpty, "the late copy was swept")
            #expect(try bob.text() == alice.text())
        }
    }

    /// A zone store that declares a participant limit (as a CloudKit share does) turns mailbox
    /// delivery on past it, with no threshold set on the document.
    @Test(arguments: StoreKind.available)
    func aStoresParticipantLimitTurnsInboxesOn(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            /// `person` whose zone store declares a limit of 2 participants per shared zone.
            func limited(_ person: Person) throws -> Person {
                var zones = try #require(person.account.zones as? HTTPZoneStore)
                zones.participantLimit = 2
                return Person(name: person.name, account: person.account.with(zones: zones), device: person.device, bundlePath: person.bundlePath)
            }
            let alice = try limited(try await server.person("alice")), bob = try limited(try await server.person("bob"))
            let carol = try limited(try await server.person("carol"))
            try alice.createBundle(text: "Start.")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            try alice.edit { try $0.insert(" two", at: 0) }
            try await aliceDoc.push()
            #expect(try await Self.inbox(bob).isEmpty, "2 participants: within the limit")
            _ = try await bobDoc.pull()
            try await aliceDoc.invite([carol.did])
            let carolDoc = try await carol.join(aliceDoc.convoId)
            for doc in [bobDoc, carolDoc] { _ = try await doc.pull() }
            try alice.edit { try $0.insert(" three", at: 0) }
            let sent = try #require(try await aliceDoc.push().seq)
            #expect(try await Self.inbox(bob) == ["\(aliceDoc.convoId)-\(sent).0"])
            #expect(try await Self.inbox(carol) == ["\(aliceDoc.convoId)-\(sent).0"])
            for doc in [bobDoc, carolDoc] { _ = try await doc.pull() }
            #expect(try bob.text() == alice.text() && carol.text() == alice.text())
            #expect(try await Self.inbox(bob).isEmpty)
            #expect(try await Self.inbox(carol).isEmpty)
        }
    }

    @Test(arguments: StoreKind.available)
    func aFailedInboxCopyIsRetriedAfterARestart(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob"), carol = try await server.person("carol")
            try alice.createBundle(text: "Start.")
            let first = try await SharedDocument.share(bundleAt: alice.bundlePath, device: alice.device, account: alice.account,
                                                       mailboxThreshold: 1)
            try await first.invite([bob.did, carol.did])
            let bobDoc = try await bob.join(aliceDoc: first)
            let carolDoc = try await carol.join(aliceDoc: first)
            // Alice's process can reach Bob's inbox but not Carol's.
            let failing = FailingInboxZoneStore(alice.account.zones, failing: ["inbox_\(carol.did)"])
            let aliceDoc = try await SharedDocument.open(bundleAt: alice.bundlePath, device: alice.device,
                                                         account: alice.account.with(zones: failing))
            try alice.edit { try $0.insert(" late-for-carol", at: 0) }
            let sent = try #require(try await aliceDoc.push().seq)
            #expect(failing.refused > 0)
            #expect(try await Self.inbox(bob) == ["\(first.convoId)-\(sent).0"], "bob's copy is not held up by carol's")
            #expect(try await Self.inbox(carol).isEmpty)
            // Alice restarts with a working connection: the queued copy goes out.
            let restarted = try await alice.open()
            _ = try await restarted.pull()
            #expect(try await Self.inbox(carol) == ["\(first.convoId)-\(sent).0"])
            _ = try await carolDoc.pull()
            _ = try await bobDoc.pull()
            #expect(try carol.text().contains("late-for-carol") && carol.text() == bob.text())
            #expect(try await Self.inbox(carol).isEmpty)
        }
    }
}
}

private extension Person {
    func join(aliceDoc: SharedDocument) async throws -> SharedDocument { try await join(aliceDoc.convoId) }
}
