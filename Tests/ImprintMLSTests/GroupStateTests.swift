import Testing
@testable import ImprintMLS
import ImprintTestSupport

@Suite struct GroupStateTests {
    typealias Client = GroupLifecycleTests.Client

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return false }
        for i in 0 ... (haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i ..< i + needle.count]) == needle { return true }
        }
        return false
    }

    /// Alice and Bob in a two-member group.
    static func pair(_ config: MLSGroupConfiguration = .init()) throws -> (MLSGroup, MLSGroup) {
        let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
        let alice = try Client("alice", suite), bob = try Client("bob", suite)
        var a = try MLSGroup.create(suite: suite, groupID: [7], credential: alice.credential, signaturePrivateKey: alice.signatureKey, configuration: config)
        let (kp, priv) = try bob.keyPackage(suite)
        let out = try a.commit([.add(kp)])
        let b = try MLSGroup.join(welcome: try #require(out.welcome), keyPackage: kp, privateKeys: priv, configuration: config)
        return (a, b)
    }

    @Test func serializationRoundTripKeepsWorking() throws {
        var (a, b) = try Self.pair()
        let msg = try a.encrypt([1, 2, 3])
        let bytes = b.serializedState()
        var restored = try MLSGroup(serializedState: bytes)
        #expect(restored.serializedState() == bytes)
        #expect(restored.epochAuthenticator == b.epochAuthenticator)
        guard case let .application(data, _, _) = try restored.process(msg) else { Issue.record("not application"); return }
        #expect(data == [1, 2, 3])
        let up = try restored.commit(options: CommitOptions(forcePath: true))
        _ = try a.process(up.commit)
        #expect(a.epochAuthenticator == restored.epochAuthenticator)
        // Unknown versions and garbage are typed errors.
        var wrongVersion = bytes
        wrongVersion[5] = 9
        #expect { try MLSGroup(serializedState: wrongVersion) } throws: { ($0 as? MLSError)?.code == .invalidValue }
        #expect(throws: MLSError.self) { try MLSGroup(serializedState: Array(bytes.dropLast())) }
    }

    @Test func decryptionDeletesKeyFromSerializedState() throws {
        var (a, b) = try Self.pair()
        let msg = try a.encrypt(Array("once".utf8))
        // The key the message uses, computed on a copy of Bob's secret tree.
        var copy = b.secretTree
        let root = try #require(b.secretTree.nodeSecrets[TreeMath.root(b.tree.leafCount)])
        #expect(Self.contains(b.serializedState(), b.secrets.exporterSecret)) // sanity: the search works
        let key = try copy.takeKey(leaf: a.myLeaf, type: .application, generation: 0)
        #expect(Self.contains(b.serializedState(), copy.application[a.myLeaf]!.secret) == false)
        _ = try b.process(msg)
        #expect { try b.process(msg) } throws: { ($0 as? MLSError)?.code == .secretConsumed }
        let state = b.serializedState()
        #expect(!Self.contains(state, key.key))
        #expect(!Self.contains(state, key.nonce))
        #expect(!Self.contains(state, root)) // nor anything it was derived from
    }

    @Test func messageThatFailsToOpenConsumesNothing() throws {
        var (a, b) = try Self.pair()
        let msg = try a.encrypt(Array("kept".utf8))
        guard case var .privateMessage(forged) = msg else { Issue.record("not a PrivateMessage"); return }
        forged.ciphertext[forged.ciphertext.count - 1] ^= 1
        let before = b.serializedState()
        #expect { try b.process(.privateMessage(forged)) } throws: { ($0 as? MLSError)?.code == .decryptionFailed }
        #expect(b.serializedState() == before)
        guard case let .application(data, _, _) = try b.process(msg) else { Issue.record("not application"); return }
        #expect(data == Array("kept".utf8))
        #expect { try b.process(msg) } throws: { ($0 as? MLSError)?.code == .secretConsumed }
    }

    @Test func pastEpochWindowBoundsOldSecrets() throws {
        var (a, b) = try Self.pair(MLSGroupConfiguration(pastEpochWindow: 1))
        let late = try a.encrypt(Array("late".utf8))
        #expect(b.secrets.encryptionSecret.isEmpty && b.secrets.epochSecret.isEmpty && b.secrets.joinerSecret.isEmpty)
        // The encryption secret lives only as the secret tree's root until expanded.
        let oldEncryption = try #require(b.secretTree.nodeSecrets[TreeMath.root(b.tree.leafCount)])
        let oldInit = b.secrets.initSecret, oldSenderData = b.secrets.senderDataSecret, oldMembership = b.secrets.membershipKey
        let c1 = try a.commit(options: CommitOptions(forcePath: true))
        _ = try b.process(c1.commit)
        // One epoch back: the late message still decrypts, once.
        guard case let .application(data, _, _) = try b.process(late) else { Issue.record("not application"); return }
        #expect(data == Array("late".utf8))
        #expect(throws: MLSError.self) { try b.process(late) }
        let state = b.serializedState()
        for s in [oldEncryption, oldInit, oldMembership] { #expect(!Self.contains(state, s)) }
        #expect(Self.contains(state, oldSenderData)) // kept for the one-epoch window
        let c2 = try a.commit(options: CommitOptions(forcePath: true))
        _ = try b.process(c2.commit)
        #expect(!Self.contains(b.serializedState(), oldSenderData)) // and gone after it
        // Two epochs back: dropped.
        let late2 = try a.encrypt(Array("later".utf8))
        _ = try b.process(try a.commit(options: CommitOptions(forcePath: true)).commit)
        _ = try b.process(try a.commit(options: CommitOptions(forcePath: true)).commit)
        _ = try b.process(try a.commit(options: CommitOptions(forcePath: true)).commit)
        #expect { try b.process(late2) } throws: { ($0 as? MLSError)?.code == .wrongEpoch }
        #expect(b.pastEpochs.count == 1)
    }

    @Test func zeroWindowDropsEpochAtOnce() throws {
        var (a, b) = try Self.pair(MLSGroupConfiguration(pastEpochWindow: 0))
        let late = try a.encrypt([1])
        _ = try b.process(try a.commit(options: CommitOptions(forcePath: true)).commit)
        #expect { try b.process(late) } throws: { ($0 as? MLSError)?.code == .wrongEpoch }
        #expect(b.pastEpochs.isEmpty)
    }

    @Test func fuzzedMessagesToGroupAreTypedErrors() throws {
        var (a, b) = try Self.pair()
        let seed: UInt64 = 0xC0FFEE
        var rng = SplitMix64(seed: seed)
        var inputs = [try a.encrypt([1, 2, 3]).tlsBytes, try a.propose(.remove(leafIndex: b.myLeaf)).tlsBytes]
        var a2 = a
        inputs.append(try a2.commit(options: CommitOptions(forcePath: true)).commit.tlsBytes)
        inputs.append(try a2.commit(options: CommitOptions(forcePath: true, encrypt: true)).commit.tlsBytes)
        var otherErrors: [String] = []
        for i in 0 ..< 300 {
            var input = inputs[Int(rng.next() % UInt64(inputs.count))]
            let flips = 1 + Int(rng.next() % 3)
            for _ in 0 ..< flips { input[Int(rng.next() % UInt64(input.count))] ^= UInt8(1 << (rng.next() % 8)) }
            if rng.next() % 4 == 0 { input = Array(input.prefix(Int(rng.next() % UInt64(input.count)))) }
            var g = b
            do {
                let m = try MLSMessage(tlsBytes: input)
                _ = try g.process(m)
            } catch is MLSError {
            } catch {
                otherErrors.append("seed \(seed) iteration \(i): \(error)")
            }
        }
        #expect(otherErrors.isEmpty, "\(otherErrors.prefix(3))")
    }

    @Test func fuzzedStateIsTypedErrorOrUsable() throws {
        var (a, b) = try Self.pair()
        _ = try b.process(try a.encrypt([1]))
        let state = b.serializedState()
        let seed: UInt64 = 0x57A7E
        var rng = SplitMix64(seed: seed)
        var other: [String] = []
        var refused = 0, usable = 0
        for i in 0 ..< 400 {
            var input = state
            switch rng.next() % 3 {
            case 0: input = Array(input.prefix(Int(rng.next() % UInt64(input.count))))
            case 1: for _ in 0 ... (rng.next() % 3) { input[Int(rng.next() % UInt64(input.count))] ^= UInt8(1 << (rng.next() % 8)) }
            default: input[Int(rng.next() % UInt64(input.count))] = [0x00, 0x3f, 0x40, 0x7f, 0x80, 0xbf, 0xc0, 0xff][Int(rng.next() % 8)]
            }
            let g: MLSGroup
            do {
                g = try MLSGroup(serializedState: input)
            } catch is MLSError {
                refused += 1
                continue
            } catch {
                other.append("seed \(seed) iteration \(i): load: \(error)")
                continue
            }
            // A state that loads is read exactly as written (the format has one encoding per
            // state), and using it either works or fails with a typed error: it never yields
            // a plaintext other than the one sent, and a failed encrypt changes nothing.
            if g.serializedState() != input { other.append("seed \(seed) iteration \(i): loaded state re-serializes differently") }
            var sender = g
            do {
                _ = try sender.encrypt([1, 2])
            } catch let error as MLSError {
                if sender.serializedState() != input { other.append("seed \(seed) iteration \(i): failed encrypt (\(error)) changed the state") }
            } catch {
                other.append("seed \(seed) iteration \(i): encrypt: \(error)")
            }
            var receiver = g
            do {
                let received = try receiver.process(try a.encrypt([3]))
                guard case let .application(data, _, _) = received, data == [3] else {
                    other.append("seed \(seed) iteration \(i): processed into \(received)")
                    continue
                }
                usable += 1
            } catch is MLSError {
                // A message that opened and then failed (its signature, say) keeps its key
                // deleted by design (`process`), so the state may differ here; a message that
                // fails to open changes nothing (`messageThatFailsToOpenConsumesNothing`).
            } catch {
                other.append("seed \(seed) iteration \(i): process: \(error)")
            }
        }
        #expect(other.isEmpty, "\(other.prefix(3))")
        print("GroupStateTests.fuzzedStateIsTypedErrorOrUsable: seed \(seed): \(refused) refused, \(usable) loaded and decrypted correctly")
    }

    @Test func fuzzedWelcomesAndGroupInfosAreTypedErrors() throws {
        let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
        let alice = try Client("alice", suite), bob = try Client("bob", suite), eve = try Client("eve", suite)
        var a = try MLSGroup.create(suite: suite, groupID: [6], credential: alice.credential, signaturePrivateKey: alice.signatureKey)
        let (kp, priv) = try bob.keyPackage(suite)
        let out = try a.commit([.add(kp)])
        let welcome = MLSMessage.welcome(try #require(out.welcome)).tlsBytes
        let info = MLSMessage.groupInfo(out.groupInfo).tlsBytes
        let seed: UInt64 = 0x3E1C
        var rng = SplitMix64(seed: seed)
        var other: [String] = []
        var joined = 0
        for i in 0 ..< 300 {
            var input = i % 2 == 0 ? welcome : info
            for _ in 0 ... (rng.next() % 2) { input[Int(rng.next() % UInt64(input.count))] ^= UInt8(1 << (rng.next() % 8)) }
            do {
                switch try MLSMessage(tlsBytes: input) {
                case let .welcome(w): _ = try MLSGroup.join(welcome: w, keyPackage: kp, privateKeys: priv)
                case let .groupInfo(g): _ = try MLSGroup.joinByExternalCommit(groupInfo: g, credential: eve.credential, signaturePrivateKey: eve.signatureKey)
                default: throw MLSError(.invalidMessage)
                }
                joined += 1
            } catch is MLSError {
            } catch {
                other.append("seed \(seed) iteration \(i): \(error)")
            }
        }
        #expect(other.isEmpty, "\(other.prefix(3))")
        // Authenticated encryption and signatures leave (almost) no mutation accepted.
        #expect(joined < 10)
    }
}
