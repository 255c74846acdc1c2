import Foundation
import Testing
@testable import ImprintMLS

@Suite struct SecretTreeTests {
    let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
    let secret = [UInt8](repeating: 0x11, count: 32)

    func serialized(_ t: SecretTree) throws -> String {
        String(decoding: try JSONEncoder().encode(t), as: UTF8.self)
    }

    func jsonArray(_ b: [UInt8]) -> String { "[" + b.map(String.init).joined(separator: ",") + "]" }

    @Test func consumedKeyIsDeletedAndCannotBeUsedTwice() throws {
        var sender = SecretTree(suite: suite, encryptionSecret: secret, leafCount: 4)
        var receiver = SecretTree(suite: suite, encryptionSecret: secret, leafCount: 4)
        let k0 = try sender.nextKey(leaf: 2, type: .application)
        let r0 = try receiver.takeKey(leaf: 2, type: .application, generation: 0)
        #expect(k0 == r0)
        #expect { try receiver.takeKey(leaf: 2, type: .application, generation: 0) } throws: { ($0 as? MLSError)?.code == .secretConsumed }
        let state = try serialized(receiver)
        #expect(!state.contains(jsonArray(r0.key)))
        #expect(!receiver.heldSecrets.contains(r0.key))
        // The encryption secret at the root was expanded and dropped.
        #expect(!state.contains(jsonArray(secret)))
    }

    @Test func outOfOrderWithinWindowThenDeleted() throws {
        var sender = SecretTree(suite: suite, encryptionSecret: secret, leafCount: 2)
        var receiver = SecretTree(suite: suite, encryptionSecret: secret, leafCount: 2)
        let keys = try (0 ..< 5).map { _ in try sender.nextKey(leaf: 1, type: .handshake) }
        #expect(try receiver.takeKey(leaf: 1, type: .handshake, generation: 4) == keys[4])
        #expect(try receiver.takeKey(leaf: 1, type: .handshake, generation: 1) == keys[1])
        #expect { try receiver.takeKey(leaf: 1, type: .handshake, generation: 1) } throws: { ($0 as? MLSError)?.code == .secretConsumed }
        #expect(try receiver.takeKey(leaf: 1, type: .handshake, generation: 0) == keys[0])
        let state = try serialized(receiver)
        for k in [keys[0], keys[1], keys[4]] { #expect(!state.contains(jsonArray(k.key))) }
        #expect(state.contains(jsonArray(keys[2].key)))
    }

    @Test func generationLimitAndSkippedKeyBound() throws {
        var receiver = SecretTree(suite: suite, encryptionSecret: secret, leafCount: 2,
                                  limits: SecretTreeLimits(maxForwardDistance: 10, maxSkippedKeys: 3))
        #expect { try receiver.takeKey(leaf: 0, type: .application, generation: 11) } throws: { ($0 as? MLSError)?.code == .generationTooFar }
        _ = try receiver.takeKey(leaf: 0, type: .application, generation: 10)
        // Only the 3 most recent skipped keys (7, 8, 9) are retained.
        #expect { try receiver.takeKey(leaf: 0, type: .application, generation: 6) } throws: { ($0 as? MLSError)?.code == .secretConsumed }
        _ = try receiver.takeKey(leaf: 0, type: .application, generation: 8)
        #expect { try receiver.takeKey(leaf: 0, type: .application, generation: 2) } throws: { ($0 as? MLSError)?.code == .secretConsumed }
        #expect { try receiver.takeKey(leaf: 5, type: .application, generation: 0) } throws: { ($0 as? MLSError)?.code == .invalidMessage }
    }
}
