import Foundation
import ImprintServerTestSupport
import ImprintSync
import ImprintTestSupport
import ImprintZones
import Testing

/// A group past CloudKit's 100 participants on a real server: one commit adds 149 members,
/// members write, some leave and others join during the run, and every member still in the
/// group ends with the same text holding every edit exactly once; at the end six members push
/// while two leave and a newcomer is invited, all at once. The document's mailbox
/// threshold is 148, so the run crosses it both ways: 150 members deliver to inboxes, 147
/// (after three left) to the shared zone only, 149 (after two joined) to inboxes again. In CI `IMPRINT_LARGE_GROUP_WRITERS`
/// members write (default 12); a wide run sets it to the group size (every member writes).
extension SyncSuites {
@Suite struct LargeGroupTests {
    static let members = ProcessInfo.processInfo.environment["IMPRINT_LARGE_GROUP_MEMBERS"].flatMap(Int.init) ?? 150
    static let writers = ProcessInfo.processInfo.environment["IMPRINT_LARGE_GROUP_WRITERS"].flatMap(Int.init) ?? 12

    /// Runs `body` over `items`, at most `width` at a time.
    static func forEach<T: Sendable, R: Sendable>(_ items: [T], width: Int = 6, _ body: @escaping @Sendable (T) async throws -> R) async throws -> [R] {
        try await concurrentMap(items, width: width, body)
    }

    @Test(arguments: StoreKind.available)
    func oneHundredFiftyMembersConvergeWhileSomeLeaveAndOthersJoin(kind: StoreKind) async throws {
        let seed = testSeed("LargeGroupTests.\(kind)", fallback: 0x150_150)
        var rng = SplitMix64(seed: seed)
        try await SyncTestServer.with(kind) { server in
            let people = try await Self.forEach(Array(0..<Self.members)) { index in
                try await server.person(String(format: "p%03d", index))
            }.sorted { $0.name < $1.name }
            let owner = people[0]
            try owner.createBundle(text: "Roster.")
            let ownerDoc = try await SharedDocument.share(bundleAt: owner.bundlePath, device: owner.device, account: owner.account,
                                                          mailboxThreshold: Self.members - 2)
            let added = try await ownerDoc.invite(people.dropFirst().map(\.did))
            #expect(added.count == Self.members - 1, "one commit adds everyone; seed \(seed)")
            let joined = try await Self.forEach(Array(people.dropFirst())) { person in
                (person.name, try await person.join(ownerDoc.convoId))
            }
            var docs = Dictionary(uniqueKeysWithValues: joined)
            docs[owner.name] = ownerDoc
            #expect(try await ownerDoc.members().members.count == Self.members)

            // Writers, chosen by the seed, each add a marker and push it.
            let writers = [owner] + Array(people.dropFirst().shuffled(using: &rng).prefix(max(0, Self.writers - 1)))
            var markers: [String] = []
            for writer in writers {
                let marker = "\(writer.name)-\(UInt32.random(in: 0...UInt32.max, using: &rng))"
                markers.append(marker)
                try writer.edit { try $0.insert(" \(marker)", at: 0) }
            }
            let writerDocs = writers.map { docs[$0.name]! }
            _ = try await Self.forEach(writerDocs) { doc in try await doc.push() }
            // The probe (whose inbox is counted) and the members who leave did not write, while
            // there are enough such members; in a wide run, where every member writes, they are
            // writers that do not race at the end (a member's own message is not copied to its inbox).
            let quiet = people.dropFirst().filter { person in !writers.contains { $0.name == person.name } }.shuffled(using: &rng)
            let nonWriters = quiet + writers.dropFirst(7)
            let probe = nonWriters[0]
            let probeWrote = quiet.isEmpty ? 1 : 0
            let inbox = { try await probe.liveRecords(in: "inbox_\(probe.did)").count }
            // Past the threshold: the probe holds every other writer's copy.
            let first = try await inbox()
            #expect(first == writers.count - probeWrote, "mailbox mode at \(Self.members) members; seed \(seed)")

            // Three members who did not write leave; the next commit removes them: shared zone only.
            let leavers = Array(nonWriters.dropFirst().prefix(3))
            for leaver in leavers { try await docs[leaver.name]!.leave() }
            try await ownerDoc.update()
            let midMarker = "mid-\(UInt32.random(in: 0...UInt32.max, using: &rng))"
            markers.append(midMarker)
            try owner.edit { try $0.insert(" \(midMarker)", at: 0) }
            try await ownerDoc.push()
            let below = try await inbox()
            #expect(below == writers.count - probeWrote, "\(Self.members - 3) members: no copy; seed \(seed)")

            // Two newcomers take it past the threshold again.
            let newcomers = [try await server.person("late-1"), try await server.person("late-2")]
            try await ownerDoc.invite(newcomers.map(\.did))
            for newcomer in newcomers { docs[newcomer.name] = try await newcomer.join(ownerDoc.convoId) }
            let lateMarker = "late-\(UInt32.random(in: 0...UInt32.max, using: &rng))"
            markers.append(lateMarker)
            try newcomers[0].edit { try $0.insert(" \(lateMarker)", at: 0) }
            try await docs[newcomers[0].name]!.push()
            // The invite's snapshot (for the newcomers, in the new epoch) and the late marker.
            let copies = try await inbox()
            #expect(copies == writers.count + 2 - probeWrote, "\(Self.members - 1) members: copies again; seed \(seed)")

            // While members write, two more leave and a third newcomer is invited: pushes race
            // the commits (a push in an ended epoch goes out again in the next).
            let racingLeavers = Array(nonWriters.dropFirst(4).prefix(2))
            let thirdNewcomer = try await server.person("late-3")
            let racingWriters = Array(writers.dropFirst().prefix(6))
            var racingMarkers: [(Person, String)] = []
            for writer in racingWriters {
                let marker = "race-\(writer.name)-\(UInt32.random(in: 0...UInt32.max, using: &rng))"
                racingMarkers.append((writer, marker))
                markers.append(marker)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (writer, marker) in racingMarkers {
                    let doc = docs[writer.name]!
                    group.addTask {
                        try await doc.edit { try $0.insert(" \(marker)", at: 0) }
                        try await doc.push()
                    }
                }
                for leaver in racingLeavers {
                    let doc = docs[leaver.name]!
                    group.addTask { try await doc.leave() }
                }
                group.addTask {
                    try await ownerDoc.invite([thirdNewcomer.did])
                    try await ownerDoc.update()  // removes whoever has left by now
                }
                try await group.waitForAll()
            }
            try await ownerDoc.update()  // and whoever left after that
            // A push that lost the race to a commit left its changes unsent; the next sends them.
            for writer in racingWriters { _ = try await docs[writer.name]!.push() }
            docs[thirdNewcomer.name] = try await thirdNewcomer.join(ownerDoc.convoId)
            let allLeavers = leavers + racingLeavers

            // Everyone still in the group catches up and holds the same text with every edit.
            let stayers = (people + newcomers + [thirdNewcomer]).filter { person in !allLeavers.contains { $0.name == person.name } }
            let stayerDocs = stayers.map { docs[$0.name]! }
            _ = try await Self.forEach(stayerDocs) { doc in try await doc.pull() }
            _ = try await ownerDoc.pull()
            let text = try owner.text()
            for marker in markers {
                #expect(text.components(separatedBy: marker).count == 2, "\(marker) lost or repeated; seed \(seed)")
            }
            let texts = try await Self.forEach(stayers) { person in (person.name, try person.text()) }
            let differing = texts.filter { $0.1 != text }.map(\.0)
            #expect(differing.isEmpty, "\(differing.count) members differ from the owner (\(differing.prefix(5))); seed \(seed)")
            let roster = try await ownerDoc.members().members.map(\.did)
            #expect(Set(roster) == Set(stayers.map(\.did)), "the group is exactly who stayed; seed \(seed)")
            #expect(try await inbox() == 0, "the probe read and cleared its inbox; seed \(seed)")
            for writer in racingWriters { #expect(await docs[writer.name]!.status().unpushedChanges == 0, "\(writer.name); seed \(seed)") }
        }
    }
}
}
