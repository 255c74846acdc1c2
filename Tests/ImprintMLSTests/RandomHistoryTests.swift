import Foundation
import Testing
@testable import ImprintMLS
import ImprintTestSupport

/// A seeded random history of adds, removes, updates (by reference), PSKs
/// and commits with and without paths, public and private; every member
/// (including a passive one that never commits) must agree after each epoch.
@Suite struct RandomHistoryTests {
    /// Every key and secret of the history (signature keys, HPKE ephemerals, path secrets,
    /// init secrets, reuse guards) is drawn from the seed through `MLSEntropy`, so a failure
    /// replays from its seed: the same seed twice ends with the same keys in every leaf.
    /// (Key-package lifetimes follow the clock, so epoch secrets, which hash them, differ.)
    @Test(arguments: CryptoTests.suites) func randomHistoryStaysInSync(suite: CipherSuite) throws {
        let base = testSeed("RandomHistoryTests (MLS)", fallback: 0x5EED_0000)
        let steps = ProcessInfo.processInfo.environment["MLS_RANDOM_STEPS"].flatMap { Int($0) } ?? 30
        let seed = base + UInt64(suite.rawValue)
        let first = try MLSEntropy.$source.withValue(DeterministicEntropy(SplitMix64(seed: ~seed))) {
            try Self.history(suite: suite, seed: seed, steps: steps)
        }
        let again = try MLSEntropy.$source.withValue(DeterministicEntropy(SplitMix64(seed: ~seed))) {
            try Self.history(suite: suite, seed: seed, steps: steps)
        }
        #expect(first == again, "seed \(seed): the same seed gave other keys")
    }

    /// Runs one history; returns every leaf's signature and encryption key at the end.
    static func history(suite: CipherSuite, seed: UInt64, steps: Int) throws -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        var counter = 0
        func newClient() throws -> GroupLifecycleTests.Client {
            counter += 1
            return try GroupLifecycleTests.Client("m\(counter)", suite)
        }
        let founder = try newClient()
        var members = [try MLSGroup.create(suite: suite, groupID: [0xab], credential: founder.credential, signaturePrivateKey: founder.signatureKey)]
        // The passive member joins first and never commits or proposes.
        let passiveClient = try newClient()
        let (pkp, ppriv) = try passiveClient.keyPackage(suite)
        let first = try members[0].commit([.add(pkp)])
        members.append(try MLSGroup.join(welcome: try #require(first.welcome), keyPackage: pkp, privateKeys: ppriv))
        let passive = 1

        for step in 0 ..< steps {
            let committer = [0] + Array(2 ..< max(2, members.count)) // never the passive member
            let c = committer[pick(committer.count)]
            var proposals: [Proposal] = []
            var proposalMessages: [MLSMessage] = []
            var newJoiners: [(KeyPackage, KeyPackagePrivateKeys)] = []
            switch pick(5) {
            case 0 where members.count < 12, 1 where members.count < 12:
                for _ in 0 ... pick(2) {
                    let kp = try newClient().keyPackage(suite)
                    newJoiners.append(kp)
                    proposals.append(.add(kp.0))
                }
            case 2 where members.count > 3:
                let candidates = members.indices.filter { $0 != c && $0 != passive }
                let victim = candidates[pick(candidates.count)]
                proposals.append(.remove(leafIndex: members[victim].myLeaf))
                if pick(2) == 0 { // and someone new, possibly into the freed slot
                    let kp = try newClient().keyPackage(suite)
                    newJoiners.append(kp)
                    proposals.append(.add(kp.0))
                }
            case 3:
                // Another member proposes an Update, sent to everyone; committed by reference.
                let others = members.indices.filter { $0 != c && $0 != passive }
                if let u = others.isEmpty ? nil : others[pick(others.count)] {
                    proposalMessages.append(try members[u].proposeUpdate(encrypt: pick(2) == 0))
                    for i in members.indices where i != u {
                        _ = try members[i].process(MLSMessage(tlsBytes: proposalMessages[0].tlsBytes))
                    }
                }
            default:
                break
            }
            let options = CommitOptions(forcePath: pick(2) == 0, ratchetTreeInWelcome: true, encrypt: pick(2) == 0)
            let out = try members[c].commit(proposals, options: options)
            let wire = out.commit.tlsBytes
            var next: [MLSGroup] = []
            for i in members.indices {
                if i == c { next.append(members[i]); continue }
                var g = members[i]
                switch try g.process(try MLSMessage(tlsBytes: wire)) {
                case .commit:
                    next.append(g)
                case .removed:
                    #expect(members[c].tree.leaf(members[i].myLeaf)?.signatureKey != members[i].tree.leaf(members[i].myLeaf)?.signatureKey, "step \(step) seed \(seed)")
                default:
                    Issue.record("step \(step): not a commit")
                }
            }
            for (kp, priv) in newJoiners {
                next.append(try MLSGroup.join(welcome: try Welcome(tlsBytes: try #require(out.welcome).tlsBytes), keyPackage: kp, privateKeys: priv))
            }
            members = next
            for g in members {
                #expect(g.epochAuthenticator == members[0].epochAuthenticator, "step \(step) seed \(seed)")
                #expect(g.tree.treeHash == members[0].tree.treeHash, "step \(step) seed \(seed)")
            }
            #expect(members[passive].tree.verifyParentHashes(), "step \(step) seed \(seed)")
            // Someone talks; everyone else reads.
            let speaker = pick(members.count)
            let msg = try members[speaker].encrypt([UInt8(step)])
            for i in members.indices where i != speaker {
                guard case let .application(data, _, _) = try members[i].process(msg) else { Issue.record("not application"); continue }
                #expect(data == [UInt8(step)])
            }
        }
        #expect(members[passive].epoch == UInt64(steps + 1))
        let tree = members[passive].tree
        return (0..<tree.leafCount).flatMap { index in
            tree.leaf(index).map { $0.signatureKey + $0.encryptionKey } ?? []
        }
    }
}
