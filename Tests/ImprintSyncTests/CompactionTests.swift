import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintStore
import ImprintSync
import ImprintTestSupport
import ImprintZones
import Testing

/// Epoch-tied compaction: members acknowledge what they processed, snapshots are marked as
/// checkpoints, and the zone drops the change sets below the newest checkpoint every active
/// member has passed. Nothing a member still needs goes, no edit is lost, a late joiner and
/// a member back from an absence converge, and the server's files shrink.
extension SyncSuites {
@Suite struct CompactionTests {
    /// The live change and commit records of the shared zone, by seq, as a member reads them.
    static func changeRecordSeqs(_ doc: SharedDocument, _ person: Person) async throws -> [Int64] {
        try await person.liveRecords(in: "doc_\(doc.convoId)")
            .filter { ["change", "commit"].contains($0.recordType) }.compactMap(\.fields.seq).sorted()
    }

    @Test(arguments: StoreKind.available)
    func compactionWaitsForTheSlowestMemberAndLosesNoEdit(kind: StoreKind) async throws {
        let seed = testSeed("CompactionTests.\(kind)", fallback: 0xC0_4AC7)
        var rng = SplitMix64(seed: seed)
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            let carol = try await server.person("carol"), dave = try await server.person("dave")
            try alice.createBundle(text: "Start.")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did, carol.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            let carolDoc = try await carol.join(aliceDoc.convoId)
            var markers: [String] = []
            func round(_ n: Int, carolToo: Bool) async throws {
                for _ in 0..<n {
                    let a = "a\(UInt32.random(in: 0...UInt32.max, using: &rng))", b = "b\(UInt32.random(in: 0...UInt32.max, using: &rng))"
                    markers += [a, b]
                    try alice.edit { try $0.insert(" \(a)", at: 0) }
                    try await aliceDoc.push()
                    try bob.edit { try $0.insert(" \(b)", at: 0) }
                    try await bobDoc.push()
                    _ = try await aliceDoc.pull()
                    _ = try await bobDoc.pull()
                    if carolToo { _ = try await carolDoc.pull() }
                }
            }
            try await round(5, carolToo: true)
            // A checkpoint everyone passes (the invite's snapshot was one too).
            let s1 = try await aliceDoc.compact().snapshotSeq
            _ = try await bobDoc.pull()
            _ = try await carolDoc.pull()
            let carolCursor = try #require(try await alice.account.delivery.getCursors(convoId: aliceDoc.convoId)
                .cursors.first { $0.did == carol.did }?.processedSeq)
            #expect(carolCursor >= s1)
            // Carol stays away while the others write on and checkpoint again.
            try await round(10, carolToo: false)
            let before = try await Self.changeRecordSeqs(aliceDoc, alice)
            let first = try await aliceDoc.compact()
            let point = try #require(first.zone?.compactedBefore, "seed \(seed)")
            #expect(point == s1, "the newest checkpoint Carol passed, not the one she has not; seed \(seed)")
            #expect(first.cursors.compactableBefore == s1)
            let afterFirst = try await Self.changeRecordSeqs(aliceDoc, alice)
            #expect(afterFirst.allSatisfy { $0 >= point } && before.contains { $0 < point }, "seed \(seed)")
            #expect(Set(before.filter { $0 > carolCursor }).isSubset(of: Set(afterFirst)), "all Carol still needs is kept; seed \(seed)")

            // Carol comes back: she catches up from what was kept, then compaction moves on.
            _ = try await carolDoc.pull()
            _ = try await bobDoc.pull()
            func messageEventSeqs(of person: Person) async throws -> [Int] {
                try await server.server.store.events(recipient: person.did, after: 0, limit: 10_000).compactMap { event in
                    if case .message(let message) = event.payload { return message.message.seq }
                    return nil
                }
            }
            let eventSeqsBefore = try await messageEventSeqs(of: carol)
            let second = try await aliceDoc.compact()
            let newPoint = try #require(second.zone?.compactedBefore, "seed \(seed)")
            #expect(eventSeqsBefore.contains { $0 < newPoint })
            #expect(newPoint == first.snapshotSeq, "seed \(seed)")
            let afterSecond = try await Self.changeRecordSeqs(aliceDoc, alice)
            #expect(afterSecond.allSatisfy { $0 >= newPoint } && afterSecond.count < afterFirst.count, "seed \(seed)")
            let messages = try await alice.account.delivery.getMessages(convoId: aliceDoc.convoId, sinceSeq: 0, limit: 1000)
            #expect(messages.messages.first?.seq == newPoint, "the Delivery Service forgot the messages below the point")
            // And their `message` events: Carol's subscription starts at the point (membership
            // events stay for the retention window).
            let eventSeqs = try await messageEventSeqs(of: carol)
            #expect(!eventSeqs.isEmpty && eventSeqs.allSatisfy { $0 >= newPoint },
                    "message events below \(newPoint) forgotten: \(eventSeqs.prefix(5)); seed \(seed)")
            #expect(second.cursors.firstKeptSeq == newPoint)

            // A late joiner starts from its own snapshot; everyone converges on every edit.
            try await aliceDoc.invite([dave.did])
            let daveDoc = try await dave.join(aliceDoc.convoId)
            try await round(2, carolToo: true)
            for doc in [aliceDoc, bobDoc, carolDoc, daveDoc] { _ = try await doc.pull() }
            let text = try alice.text()
            for person in [bob, carol, dave] { #expect(try person.text() == text, "\(person.name); seed \(seed)") }
            for marker in markers { #expect(text.contains(marker), "\(marker) lost; seed \(seed)") }
        }
    }

    /// A member away longer than the window holds compaction back until an admin renews it
    /// (removed and added again with a fresh Welcome); compaction then moves past its old
    /// cursor, and when it comes back its client starts the new membership in the same bundle
    /// and pushes the edit it made while away. Once through the stale object's `pull`, once
    /// through `open` after the old membership had ended.
    @Test(arguments: StoreKind.available)
    func aMemberAwayTooLongIsRenewedAndLosesNoEdit(kind: StoreKind) async throws {
        let seed = testSeed("CompactionTests.renewal.\(kind)", fallback: 0x2E_4E_A1)
        var rng = SplitMix64(seed: seed)
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            let carol = try await server.person("carol"), dave = try await server.person("dave")
            try alice.createBundle(text: "Start.")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did, carol.did, dave.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            let carolDoc = try await carol.join(aliceDoc.convoId)
            let daveDoc = try await dave.join(aliceDoc.convoId)
            // Carol and Dave go away, each with an edit never pushed.
            try carol.edit { try $0.insert("carol-away ", at: 0) }
            try dave.edit { try $0.insert("dave-away ", at: 0) }
            var markers = ["carol-away", "dave-away"]
            for _ in 0..<6 {
                let marker = "m\(UInt32.random(in: 0...UInt32.max, using: &rng))"
                markers.append(marker)
                try alice.edit { try $0.insert(" \(marker)", at: 0) }
                try await aliceDoc.push()
                _ = try await bobDoc.pull()
            }
            let held = try await aliceDoc.compact()
            #expect((held.zone?.compactedBefore ?? 0) < held.snapshotSeq, "Carol and Dave hold the point; seed \(seed)")

            // Dave is removed by hand and his client sees it (its membership ends); he is
            // invited again later and a fresh open starts the new membership in his bundle.
            try await aliceDoc.remove(dave.did)
            await #expect(throws: SyncError.self) { try await daveDoc.pull() }
            await #expect(throws: SyncError.self) { try await dave.open() }

            // Away "too long": a zero window renews everyone behind Alice (Bob is not).
            _ = try await bobDoc.pull()
            let renewal = try await aliceDoc.renewMembers(awayFor: .zero)
            #expect(renewal.renewed == [carol.did] && renewal.withoutKeyPackage.isEmpty, "\(renewal); seed \(seed)")
            _ = try await bobDoc.pull()
            let moved = try await aliceDoc.compact()
            #expect(moved.zone?.compactedBefore == held.snapshotSeq, "compaction passed the renewed member's old cursor; seed \(seed)")

            // Carol's open object notices at its next pull; her away edit goes out.
            _ = try await carolDoc.pull()
            try await carolDoc.push()
            try await aliceDoc.invite([dave.did])
            let daveAgain = try await dave.open()
            try await daveAgain.push()

            for doc in [aliceDoc, bobDoc, carolDoc, daveAgain] { _ = try await doc.pull() }
            let text = try alice.text()
            for person in [bob, carol, dave] { #expect(try person.text() == text, "\(person.name); seed \(seed)") }
            for marker in markers { #expect(text.contains(marker), "\(marker) lost; seed \(seed)") }
            // Both renewed members are ordinary members again.
            let members = try await aliceDoc.members().members.map(\.did)
            #expect(Set(members) == [alice.did, bob.did, carol.did, dave.did])
        }
    }

    /// With `SyncOptions.renewMembersAwayFor` set, an admin's ordinary pulls renew members
    /// away longer than the window, without anyone asking: the member away (with an edit never
    /// pushed) comes back into the group at its next pull and loses nothing; a member who is
    /// not an admin renews nobody; a renewal is not tried again before its check interval.
    @Test(arguments: StoreKind.available)
    func anAdminsPullsRenewMembersAwayPastTheConfiguredWindow(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            var options = SyncOptions()
            options.renewMembersAwayFor = .seconds(1)
            let alice = try await server.person("alice", options: options), bob = try await server.person("bob", options: options)
            let carol = try await server.person("carol")
            try alice.createBundle(text: "Start.")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did, carol.did])
            let bobDoc = try await bob.join(aliceDoc.convoId), carolDoc = try await carol.join(aliceDoc.convoId)
            _ = try await carolDoc.pull()
            try carol.edit { try $0.insert("carol-away ", at: 0) }
            // Carol goes away. Alice writes and Bob keeps up; within the window nobody is renewed.
            try alice.edit { try $0.insert(" alice-1", at: 0) }
            try await aliceDoc.push()
            #expect(try await aliceDoc.pull().renewed.isEmpty)
            _ = try await bobDoc.pull()
            try await Task.sleep(for: .milliseconds(1_300))
            _ = try await bobDoc.pull()  // Bob is behind nobody, and no admin
            #expect(try await bobDoc.pull().renewed.isEmpty, "Bob is not an admin")
            let renewing = try await aliceDoc.pull()
            #expect(renewing.renewed == [carol.did], "\(renewing)")
            #expect(try await aliceDoc.pull().renewed.isEmpty, "Bob, quiet and now behind by the renewal's commits, is not away")
            // Carol's next pull ends the old membership and starts the new one; her edit goes out.
            _ = try await carolDoc.pull()
            try await carolDoc.push()
            for doc in [aliceDoc, bobDoc, carolDoc] { _ = try await doc.pull() }
            let text = try alice.text()
            #expect(text.contains("carol-away") && text.contains("alice-1"))
            for person in [bob, carol] { #expect(try person.text() == text, "\(person.name)") }
            #expect(Set(try await aliceDoc.members().members.map(\.did)) == [alice.did, bob.did, carol.did])
            #expect(await aliceDoc.status().alerts.isEmpty)
        }
    }

    /// Change sets big enough to be stored as asset files (over the 48 KiB inline limit) and
    /// small ones inline in the database: after compaction their blob files are gone and the
    /// SQLite file is smaller (its free pages given back).
    @Test func theServersFilesShrink() async throws {
        let seed = testSeed("CompactionTests.files", fallback: 0xF11E5)
        var rng = SplitMix64(seed: seed)
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            for _ in 0..<12 {
                // Random letters compress to about 60%: each change set is stored as a file.
                let text = String((0..<100_000).map { _ in Character(Unicode.Scalar(UInt8.random(in: 97...122, using: &rng))) })
                try alice.edit { try $0.insert(text, at: 0) }
                try await aliceDoc.push()
                _ = try await bobDoc.pull()
            }
            // Plus many small ones, inline in the database.
            for n in 0..<150 {
                try bob.edit { try $0.insert("\(n) ", at: 0) }
                try await bobDoc.push()
            }
            _ = try await aliceDoc.pull()
            // A checkpoint both have passed; the next compaction drops every change set above.
            _ = try await aliceDoc.compact()
            _ = try await bobDoc.pull()
            let sqlite = try #require(server.server.store as? SQLiteDeliveryStore)
            try await sqlite.reclaimFreePages()
            let filesBefore = Self.files(server.zoneData)
            let databaseBefore = Self.fileBytes(server.directory.file("server/delivery.sqlite"))
            let run = try #require(try await aliceDoc.compact().zone)
            #expect(run.deletedRecords >= 162, "12 large and 150 small change sets; seed \(seed)")
            let removed = filesBefore.subtracting(Self.files(server.zoneData))
            #expect(removed.count >= 12, "the large change sets' blob files are gone: \(removed.count); seed \(seed)")
            let databaseAfter = Self.fileBytes(server.directory.file("server/delivery.sqlite"))
            #expect(databaseAfter < databaseBefore, "database \(databaseBefore) → \(databaseAfter) B; seed \(seed)")
            #expect(try bob.text() == alice.text())
        }
    }

    /// Without anyone asking, the server compacts a zone once every member passed a checkpoint.
    @Test func theServerCompactsByItself() async throws {
        try await SyncTestServer.with(.sqlite, compactionInterval: .milliseconds(200)) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "x")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            for n in 0..<20 {
                try alice.edit { try $0.insert("\(n)", at: 0) }
                try await aliceDoc.push()
            }
            _ = try await bobDoc.pull()
            let before = try await Self.changeRecordSeqs(aliceDoc, alice)
            // Inviting Carol sends a snapshot (a checkpoint); once all three have processed it,
            // the twenty change sets before it are the server's to drop.
            let carol = try await server.person("carol")
            try await aliceDoc.invite([carol.did])
            let carolDoc = try await carol.join(aliceDoc.convoId)
            for doc in [aliceDoc, bobDoc, carolDoc] { _ = try await doc.pull() }
            let deadline = ContinuousClock.now + .seconds(60)
            var after = before
            while ContinuousClock.now < deadline {
                after = try await Self.changeRecordSeqs(aliceDoc, alice)
                if after.count < before.count { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(after.count < before.count, "\(before.count) → \(after.count) records")
        }
    }

    static func files(_ directory: String) -> Set<String> {
        Set(((try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? []).filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory) && !isDirectory.boolValue
        })
    }

    static func fileBytes(_ path: String) -> Int {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
        if !isDirectory.boolValue {
            return ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
        }
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []
        return names.reduce(0) { total, name in
            let full = path + "/" + name
            var inner: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &inner), !inner.boolValue else { return total }
            return total + (((try? FileManager.default.attributesOfItem(atPath: full)[.size]) as? Int) ?? 0)
        }
    }
}
}
