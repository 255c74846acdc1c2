import Foundation
import ImprintServerTestSupport
import ImprintSync
import ImprintTestSupport
import Testing

/// Three people (a fourth joins half way) co-edit on seeded random schedules of edits, pushes,
/// pulls, restarts, time offline and commits; at the end, once everyone is online and has
/// exchanged everything, every copy holds the same text with every edit in it.
/// `IMPRINT_SYNC_SCHEDULE_STEPS` (default 60) and `IMPRINT_SYNC_SCHEDULE_RUNS` (default 1
/// per backend) widen the run; `IMPRINT_TEST_SEED` replays one.
extension SyncSuites {
@Suite struct RandomScheduleTests {
    @Test(arguments: StoreKind.available)
    func everyEditReachesEveryone(kind: StoreKind) async throws {
        let steps = Int(ProcessInfo.processInfo.environment["IMPRINT_SYNC_SCHEDULE_STEPS"] ?? "") ?? 60
        let runs = Int(ProcessInfo.processInfo.environment["IMPRINT_SYNC_SCHEDULE_RUNS"] ?? "") ?? 1
        let base = testSeed("RandomScheduleTests.\(kind)", fallback: 0xC0_ED17)
        for run in 0..<runs {
            try await Self.schedule(kind: kind, seed: base &+ UInt64(run), steps: steps)
        }
    }

    static func schedule(kind: StoreKind, seed: UInt64, steps: Int) async throws {
        var random = SplitMix64(seed: seed)
        try await SyncTestServer.with(kind) { server in
            var people = [try await server.person("alice"), try await server.person("bob"), try await server.person("carol")]
            let dave = try await server.person("dave")
            try people[0].createBundle(text: "")
            var docs: [SharedDocument?] = [try await people[0].share(), nil, nil]
            try await docs[0]!.invite([people[1].did, people[2].did])
            docs[1] = try await people[1].join(docs[0]!.convoId)
            docs[2] = try await people[2].join(docs[0]!.convoId)
            var online = [true, true, true]
            var tokens: [String] = []
            for step in 0..<steps {
                let who = Int.random(in: 0..<people.count, using: &random)
                let action = Int.random(in: 0..<100, using: &random)
                let person = people[who]
                if step == steps / 2 && people.count == 3 {
                    // A fourth member joins half way, through whoever is online (admins only: Alice).
                    if online[0] {
                        try await docs[0]!.invite([dave.did])
                        people.append(dave)
                        docs.append(try await dave.join(docs[0]!.convoId))
                        online.append(true)
                    }
                    continue
                }
                switch action {
                case 0..<40: // an edit, online or not
                    let token = "<\(person.name)\(step)>"
                    tokens.append(token)
                    let position = Int.random(in: 0...1_000_000, using: &random)
                    try person.edit { bundle in try bundle.insert(token, at: min(position, try bundle.text().unicodeScalars.count)) }
                case 40..<60 where online[who]:
                    try await docs[who]!.push()
                case 60..<80 where online[who]:
                    try await docs[who]!.pull()
                case 80..<88: // a restart: the client is opened again from disk
                    docs[who] = try await person.open()
                case 88..<96:
                    online[who].toggle()
                case 96..<100 where online[who]:
                    try await docs[who]!.update() // a commit (leaf rotation) racing the others' messages
                default:
                    break
                }
            }
            for _ in 0..<2 {
                for index in people.indices {
                    try await docs[index]!.push()
                    try await docs[index]!.pull()
                }
            }
            let texts = try people.map { try $0.text() }
            for (person, text) in zip(people, texts) {
                #expect(text == texts[0], "\(person.name) differs from \(people[0].name) (seed \(seed))")
                for token in tokens where !text.contains(token) {
                    Issue.record("\(person.name) lacks \(token) (seed \(seed))")
                }
                let status = await docs[people.firstIndex { $0.name == person.name }!]!.status()
                #expect(status.gaps.isEmpty && status.unpushedChanges == 0 && status.alerts.isEmpty, "\(person.name): \(status) (seed \(seed))")
            }
        }
    }
}
}
