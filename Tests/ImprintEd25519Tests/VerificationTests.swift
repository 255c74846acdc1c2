import Crypto
import Dispatch
import Foundation
import Testing
@testable import ImprintEd25519
import ImprintTestSupport

/// Every answer of the prepared verifier is checked against swift-crypto (BoringSSL) on the
/// same bytes: valid signatures, every kind of corruption, and hostile keys and scalars.
@Suite struct VerificationTests {
    struct Case {
        var key: [UInt8]
        var message: [UInt8]
        var signature: [UInt8]
    }

    static func signingKey<G: RandomNumberGenerator>(using rng: inout G) -> Curve25519.Signing.PrivateKey {
        try! Curve25519.Signing.PrivateKey(rawRepresentation: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    /// Checks that `prepared` (when the key could be prepared) answers as swift-crypto does.
    func expectAgreement(_ c: Case, prepared: Ed25519VerifyingKey?, _ note: @autoclosure () -> String) {
        let expected = (try? Curve25519.Signing.PublicKey(rawRepresentation: c.key))
            .map { $0.isValidSignature(c.signature, for: c.message) } ?? false
        if let prepared {
            #expect(prepared.rawRepresentation == c.key)
            #expect(prepared.isValidSignature(c.signature, for: c.message) == expected, "\(note())")
        }
    }

    func expectAgreement(_ c: Case, _ note: @autoclosure () -> String) {
        expectAgreement(c, prepared: Ed25519VerifyingKey(rawRepresentation: c.key), note())
        let expected = (try? Curve25519.Signing.PublicKey(rawRepresentation: c.key))
            .map { $0.isValidSignature(c.signature, for: c.message) } ?? false
        let verifier = Ed25519SignatureVerifier(capacity: 4, precomputeAfter: 1)
        #expect(verifier.isValidSignature(c.signature, for: c.message, publicKey: c.key) == expected, "\(note())")
    }

    @Test func baseTableGivesPublicKeys() throws {
        // A = [a]B with a the clamped first half of SHA-512(seed): the comb with k = 0 must
        // reproduce swift-crypto's public keys.
        var rng = SplitMix64(seed: 0xBA5E)
        let dummy = try #require(Ed25519VerifyingKey(rawRepresentation: BasePointTable.encoding))
        for _ in 0..<50 {
            let seed = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var h = [UInt8](SHA512.hash(data: seed))
            h[0] &= 248; h[31] &= 127; h[31] |= 64
            let a = (Array(h[0..<32]) + [UInt8](repeating: 0, count: 32)).withUnsafeBytes { Scalar(reducing: $0) }
            let point = Ed25519VerifyingKey.combine(s: a, k: Scalar(w0: 0, w1: 0, w2: 0, w3: 0), minusA: dummy.table)
            let expected = try Curve25519.Signing.PrivateKey(rawRepresentation: seed).publicKey.rawRepresentation
            #expect(point.encoded() == [UInt8](expected), "seed bytes \(seed)")
        }
    }

    /// `count` random signed messages, each with a fresh key.
    static func signedCases(count: Int, maxLength: Int, seed: UInt64) throws -> [Case] {
        var rng = SplitMix64(seed: seed)
        return try (0..<count).map { _ in
            let key = signingKey(using: &rng)
            let message = (0..<Int.random(in: 0...maxLength, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            return Case(key: [UInt8](key.publicKey.rawRepresentation), message: message, signature: [UInt8](try key.signature(for: message)))
        }
    }

    @Test func validSignaturesVerify() throws {
        let seed: UInt64 = 0x51_6E_A7_0E
        for (index, c) in try Self.signedCases(count: 200, maxLength: 300, seed: seed).enumerated() {
            let prepared = try #require(Ed25519VerifyingKey(rawRepresentation: c.key))
            #expect(prepared.isValidSignature(c.signature, for: c.message), "seed \(seed), case \(index)")
        }
    }

    @Test func corruptedInputsAgreeWithSwiftCrypto() throws {
        let seed: UInt64 = 0xC0_22_07_ED
        var rng = SplitMix64(seed: seed &+ 1)
        for (index, good) in try Self.signedCases(count: 150, maxLength: 100, seed: seed).enumerated() {
            let prepared = try #require(Ed25519VerifyingKey(rawRepresentation: good.key))
            for _ in 0..<4 {
                var c = good
                c.signature[Int.random(in: 0..<64, using: &rng)] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
                expectAgreement(c, prepared: prepared, "seed \(seed), case \(index), signature bit")
            }
            var c = good
            if c.message.isEmpty { c.message = [0] } else { c.message[Int.random(in: 0..<c.message.count, using: &rng)] ^= 0x10 }
            expectAgreement(c, prepared: prepared, "seed \(seed), case \(index), message byte")
            c = good
            c.signature = (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) }
            expectAgreement(c, prepared: prepared, "seed \(seed), case \(index), random signature")
            c = good
            c.key[Int.random(in: 0..<32, using: &rng)] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
            expectAgreement(c, "seed \(seed), case \(index), key bit")
        }
    }

    @Test func malleatedScalarIsRejected() throws {
        // S + L verifies the same equation, and must still be rejected (RFC 8032 §5.1.7).
        var rng = SplitMix64(seed: 9)
        for _ in 0..<20 {
            let key = Self.signingKey(using: &rng)
            let message: [UInt8] = [1, 2, 3]
            let signature = [UInt8](try key.signature(for: message))
            let s = Reference.words(Array(signature[32..<64]))
            let malleated = Reference.add(s, Reference.l)
            #expect(malleated[4] == 0)
            let forged = Case(key: [UInt8](key.publicKey.rawRepresentation), message: message,
                              signature: Array(signature[0..<32]) + Reference.bytes(Array(malleated[0..<4])))
            expectAgreement(forged, "S + L")
            #expect(Ed25519VerifyingKey(rawRepresentation: forged.key)!.isValidSignature(forged.signature, for: message) == false)
        }
    }

    @Test func unusualKeysAreDeclinedAndStillAgree() throws {
        var rng = SplitMix64(seed: 31)
        let p = Reference.bytes(Reference.p)
        var pMinusOne = p
        pMinusOne[0] -= 1
        let one = [1] + [UInt8](repeating: 0, count: 31)
        var oneNegative = one
        oneNegative[31] |= 0x80
        var pPlusOne = p                    // non-canonical encoding of y = 1
        pPlusOne[0] += 1
        var nonCanonicalB = BasePointTable.encoding
        nonCanonicalB[31] |= 0x80           // B with the wrong sign of x is -B: fine
        // x = 0 (y = ±1, small order) and non-canonical y are left to swift-crypto.
        let declined: [[UInt8]] = [one, oneNegative, pMinusOne, p, pPlusOne]
        for key in declined {
            let wasDeclined = Ed25519VerifyingKey(rawRepresentation: key) == nil
            #expect(wasDeclined, "\(key)")
            for _ in 0..<5 {
                let signature = (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) }
                expectAgreement(Case(key: key, message: [7], signature: signature), "declined key \(key)")
            }
        }
        // Other small-order points (y = 0 has order 4) are ordinary points to the arithmetic.
        let orderFour = [UInt8](repeating: 0, count: 32)
        for _ in 0..<5 {
            let signature = (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) }
            expectAgreement(Case(key: orderFour, message: [7], signature: signature), "order-4 key")
        }
        // R = identity, S = 0 against the order-4 key: [0]B - [k]A is the identity only when 4 | k.
        let identityR = [1] + [UInt8](repeating: 0, count: 63)
        var accepted = 0
        for byte in 0..<16 {
            let c = Case(key: orderFour, message: [UInt8(byte)], signature: identityR)
            expectAgreement(c, "order-4 key, trivial signature")
            if try Curve25519.Signing.PublicKey(rawRepresentation: orderFour).isValidSignature(c.signature, for: c.message) { accepted += 1 }
        }
        #expect(accepted > 0 && accepted < 16)
        let acceptsNegatedB = Ed25519VerifyingKey(rawRepresentation: nonCanonicalB) != nil
        #expect(acceptsNegatedB)
        // Bytes that are no curve point at all: about half of all y values.
        var offCurve = 0
        for _ in 0..<64 {
            let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let isOffCurve = Ed25519VerifyingKey(rawRepresentation: key) == nil
            if isOffCurve { offCurve += 1 }
            expectAgreement(Case(key: key, message: [], signature: [UInt8](repeating: 0, count: 64)), "random key \(key)")
        }
        #expect(offCurve > 10)
        let shortDeclined = Ed25519VerifyingKey(rawRepresentation: [UInt8](repeating: 9, count: 31)) == nil
        #expect(shortDeclined)
    }

    @Test func wrongLengthsAreFalse() throws {
        var rng = SplitMix64(seed: 5)
        let key = Self.signingKey(using: &rng)
        let signature = [UInt8](try key.signature(for: [1]))
        let publicKey = [UInt8](key.publicKey.rawRepresentation)
        let verifier = Ed25519SignatureVerifier()
        #expect(verifier.isValidSignature(signature, for: [1], publicKey: publicKey))
        #expect(!verifier.isValidSignature(signature.dropLast(), for: [1], publicKey: publicKey))
        #expect(!verifier.isValidSignature(signature + [0], for: [1], publicKey: publicKey))
        #expect(!verifier.isValidSignature(signature, for: [1], publicKey: publicKey.dropLast()))
        #expect(!Ed25519VerifyingKey(rawRepresentation: publicKey)!.isValidSignature(signature.dropLast(), for: [1]))
    }

    @Test func verifierPreparesRepeatedKeysWithinCapacity() throws {
        var rng = SplitMix64(seed: 11)
        let keys = (0..<3).map { _ in Self.signingKey(using: &rng) }
        let verifier = Ed25519SignatureVerifier(capacity: 2, precomputeAfter: 2)
        func check(_ key: Curve25519.Signing.PrivateKey, _ message: [UInt8]) throws {
            let signature = try key.signature(for: message)
            #expect(verifier.isValidSignature(signature, for: message, publicKey: key.publicKey.rawRepresentation))
            var bad = [UInt8](signature)
            bad[5] ^= 1
            #expect(!verifier.isValidSignature(bad, for: message, publicKey: key.publicKey.rawRepresentation))
        }
        let first = try keys[0].signature(for: [1])
        #expect(verifier.isValidSignature(first, for: [1], publicKey: keys[0].publicKey.rawRepresentation))
        #expect(verifier.preparedKeyCount == 0)      // first use: only counted
        try check(keys[0], [2])                      // prepared on the second use
        #expect(verifier.preparedKeyCount == 1)
        try check(keys[1], [3]); try check(keys[1], [4])
        #expect(verifier.preparedKeyCount == 2)
        try check(keys[2], [5]); try check(keys[2], [6])
        #expect(verifier.preparedKeyCount == 2)      // the least recently used went
        for key in keys { try check(key, [7]) }
        #expect(verifier.preparedKeyCount == 2)
    }

    @Test func verifierIsSafeAcrossThreads() throws {
        var rng = SplitMix64(seed: 12)
        let keys = (0..<8).map { _ in Self.signingKey(using: &rng) }
        let items: [(key: [UInt8], message: [UInt8], signature: [UInt8], valid: Bool)] = try (0..<400).map { index in
            let key = keys[index % keys.count]
            let message = [UInt8(index & 0xFF), UInt8(index >> 8)]
            var signature = [UInt8](try key.signature(for: message))
            let valid = index % 3 != 0
            if !valid { signature[40] ^= 4 }
            return ([UInt8](key.publicKey.rawRepresentation), message, signature, valid)
        }
        let verifier = Ed25519SignatureVerifier(capacity: 4, precomputeAfter: 3)
        let results = UnsafeMutableBufferPointer<Bool>.allocate(capacity: items.count)
        defer { results.deallocate() }
        nonisolated(unsafe) let output = results
        DispatchQueue.concurrentPerform(iterations: items.count) { index in
            let item = items[index]
            output[index] = verifier.isValidSignature(item.signature, for: item.message, publicKey: item.key)
        }
        #expect(Array(results) == items.map(\.valid))
        #expect(verifier.preparedKeyCount <= 4)
    }
}
