import Foundation
import ImprintBundle
import ImprintCRDT
import Testing
@testable import ImprintStore
import ImprintTestSupport

/// Three machines edit one bundle offline for several rounds and meet through a dumb file
/// copier that produces every style of conflict copy. Machines alpha and beta sometimes write
/// as the same device ("shared": a restored backup), which is what makes sync tools produce
/// conflict copies of change logs and snapshots; titles set everywhere conflict metadata.json.
@Suite struct MultiMachineSyncTests {
    @Test func everyMachineConvergesWithEveryEdit() throws {
        // Three seeded scenarios (with IMPRINT_TEST_SEED set: that seed and the next two);
        // each produces every style of conflict copy by construction.
        let base = testSeed("MultiMachineSyncTests.everyMachineConvergesWithEveryEdit", fallback: 0x1111_2222_3333_4444)
        for index: UInt64 in 0..<3 {
            let styles = try runScenario(seed: base &+ index)
            print("conflict copies produced, scenario \(base &+ index): \(styles.sorted { $0.key.rawValue < $1.key.rawValue })")
            #expect(Set(styles.keys) == Set(ConflictStyle.allCases), "seed \(base &+ index)")
        }
    }

    /// One scenario; returns the conflict copies the copier produced, by style.
    func runScenario(seed: UInt64) throws -> [ConflictStyle: Int] {
        var rng = SplitMix64(seed: seed)
        let temp = TemporaryDirectory("machines")
        let cloud = SimulatedCloud()
        let machines = ["alpha", "beta", "gamma"].map { Machine(name: $0, root: temp.file($0)) }
        let shared = try DeviceID("shared")
        let devices = try machines.map { try DeviceID($0.name) }
        let bundleName = "paper.imprint"
        var clock: Int64 = 1_795_000_000_000
        func tick() -> Int64 { clock += 1000; return clock }
        func open(_ m: Int, as device: DeviceID) throws -> DocumentBundle {
            try DocumentBundle.open(at: machines[m].root + "/" + bundleName, device: device,
                                    actor: SessionActor.make(for: device, using: &rng))
        }

        _ = try DocumentBundle.create(at: machines[0].root + "/" + bundleName, device: devices[0], title: "Paper",
                                      documentID: "doc-\(seed)", actor: SessionActor.make(for: devices[0], using: &rng),
                                      time: Date(timeIntervalSince1970: 1_795_000_000))
        for machine in machines { try cloud.sync(machine, style: .dropbox) }

        var tokens: [String] = []
        let styles = ConflictStyle.allCases
        for round in 0..<8 {
            for (m, _) in machines.enumerated() {
                for e in 0..<Int.random(in: 1...3, using: &rng) {
                    let useShared = m < 2 && Bool.random(using: &rng)
                    let doc = try open(m, as: useShared ? shared : devices[m])
                    let token = "<\(machines[m].name)-\(round)-\(e)>"
                    tokens.append(token)
                    let length = try doc.text().unicodeScalars.count
                    // Insert between tokens only, so no edit splits another.
                    let boundaries = [0, length] + (try doc.text()).indices(of: "<").map { $0 }
                    let position = boundaries.randomElement(using: &rng)!
                    if Int.random(in: 0..<4, using: &rng) == 0 {
                        var scalars = Array(try doc.text().unicodeScalars)
                        scalars.insert(contentsOf: token.unicodeScalars, at: position)
                        var view = String.UnicodeScalarView()
                        view.append(contentsOf: scalars)
                        try doc.replaceBody(with: String(view), message: "replace", time: tick())
                    } else {
                        try doc.insert(token, at: position, time: tick())
                    }
                    if Int.random(in: 0..<3, using: &rng) == 0 {
                        try doc.set("title", to: "Paper by \(machines[m].name) r\(round)", time: tick())
                    }
                    if useShared && Bool.random(using: &rng) { try doc.sync(settle: .immediate) }
                }
            }
            for m in Array(machines.indices).shuffled(using: &rng) {
                try cloud.sync(machines[m], style: styles[(round + m) % styles.count])
                if Bool.random(using: &rng) { try open(m, as: devices[m]).sync(settle: .immediate) }
            }
        }
        // Every style by construction: in each, alpha and beta both retitle the document
        // (both change metadata.json) and sync, so beta's sync meets a conflict in that style.
        for style in styles {
            for m in 0..<2 {
                try open(m, as: devices[m]).set("title", to: "Paper \(style.rawValue) \(machines[m].name)", time: tick())
            }
            try cloud.sync(machines[0], style: style)
            try cloud.sync(machines[1], style: style)
        }
        for pass in 0..<4 {
            for (m, machine) in machines.enumerated() {
                try cloud.sync(machine, style: styles[(pass + m) % styles.count])
                try open(m, as: devices[m]).sync(settle: .immediate)
            }
        }

        let docs = try machines.indices.map { try open($0, as: devices[$0]) }
        let text = try docs[0].text()
        for doc in docs {
            #expect(try doc.text() == text)
            #expect(try doc.jsonValue() == docs[0].jsonValue())
            #expect(doc.warnings.isEmpty, "\(doc.warnings)")
            let inventory = try doc.store.layout.inventory()
            #expect(inventory.changeLogs.allSatisfy { $0.conflictCopy == nil })
            #expect(inventory.snapshots.allSatisfy { $0.conflictCopy == nil })
            #expect(inventory.metadataConflictCopies.isEmpty)
            #expect(try doc.store.duplicateBundles().isEmpty)
        }
        for token in tokens { #expect(text.contains(token), "missing \(token)") }
        #expect(text.unicodeScalars.count == tokens.map { $0.unicodeScalars.count }.reduce(0, +))
        #expect(cloud.conflicts.count >= 3, "too few conflict styles exercised: \(cloud.conflicts)")
        return cloud.conflicts
    }
}

private extension String {
    /// Code-point offsets of every occurrence of `character`.
    func indices(of character: Unicode.Scalar) -> [Int] {
        unicodeScalars.enumerated().filter { $0.element == character }.map(\.offset)
    }
}
