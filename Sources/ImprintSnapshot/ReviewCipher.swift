import Crypto
import _CryptoExtras
import Foundation

/// The symmetric half of reviewer snapshots, exactly as the viewer does it in WebCrypto:
/// AES-256-GCM with a 12-byte random iv and the tag appended to the ciphertext, and
/// PBKDF2-HMAC-SHA256 over the password's UTF-8 bytes for the password form.
enum ReviewCipher {
    static func seal(_ plaintext: [UInt8], key: SymmetricKey, aad: [UInt8]) throws(ReviewSnapshotError) -> ReviewEnvelope.Sealed {
        do {
            let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: aad)
            return ReviewEnvelope.Sealed(iv: Data(box.nonce).base64EncodedString(),
                                         data: (box.ciphertext + box.tag).base64EncodedString())
        } catch {
            throw ReviewSnapshotError(.invalidArgument, "AES-GCM seal: \(error)")
        }
    }

    /// Opens `sealed`; a wrong key or changed byte is `.decryptionFailed`, bad base64 or sizes
    /// `.malformed`.
    static func open(_ sealed: ReviewEnvelope.Sealed, key: SymmetricKey, aad: [UInt8]) throws(ReviewSnapshotError) -> [UInt8] {
        guard let iv = Data(base64Encoded: sealed.iv), iv.count == 12,
              let data = Data(base64Encoded: sealed.data), data.count >= 16 else {
            throw ReviewSnapshotError(.malformed, "sealed value: bad iv or ciphertext")
        }
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: data.dropLast(16), tag: data.suffix(16))
            return Array(try AES.GCM.open(box, using: key, authenticating: aad))
        } catch {
            throw ReviewSnapshotError(.decryptionFailed, "authentication failed: damaged, tampered with, or another key")
        }
    }

    /// The password key: PBKDF2-HMAC-SHA256, 32 bytes.
    static func passwordKey(_ password: String, salt: [UInt8], iterations: Int) throws(ReviewSnapshotError) -> SymmetricKey {
        guard iterations >= ReviewEnvelope.minimumIterations, iterations <= ReviewEnvelope.maximumIterations else {
            throw ReviewSnapshotError(.invalidArgument, "PBKDF2 iterations \(iterations) outside \(ReviewEnvelope.minimumIterations)...\(ReviewEnvelope.maximumIterations)")
        }
        do {
            return try KDF.Insecure.PBKDF2.deriveKey(from: Array(password.utf8), salt: salt, using: .sha256,
                                                     outputByteCount: 32, rounds: iterations)
        } catch {
            throw ReviewSnapshotError(.invalidArgument, "PBKDF2: \(error)")
        }
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }
}
