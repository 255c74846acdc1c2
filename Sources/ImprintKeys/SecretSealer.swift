import Crypto
import ImprintEd25519

/// Seals and opens one secret with AES-256-GCM.
///
/// The key is derived per identity from the store's master key (HKDF-SHA256, info
/// `imprint-keys/identity/<did>`), and the associated data names the table and the row's key
/// (`<table>\0<key parts…>`). So a sealed blob opens only as the row it was written as: a
/// blob copied to another identity's row, another convo or another epoch fails
/// authentication (`.corrupt`) instead of leaking. A blob is `nonce ‖ ciphertext ‖ tag`
/// (12 + n + 16 bytes), with a fresh random nonce each time.
struct SecretSealer: Sendable {
    private let master: SymmetricKey

    init(master: SymmetricKey) { self.master = master }

    /// The sealing key of `identity`.
    func key(for identity: DIDKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: master, info: Array("imprint-keys/identity/\(identity.did)".utf8),
                               outputByteCount: 32)
    }

    func seal(_ plaintext: [UInt8], identity: DIDKey, table: String, key parts: [String]) throws(KeyStoreError) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plaintext, using: key(for: identity), authenticating: Self.context(table, parts))
            return Array(box.combined!) // 12-byte nonce: always combinable
        } catch {
            throw KeyStoreError(.io, "sealing failed: \(error)")
        }
    }

    func open(_ blob: [UInt8], identity: DIDKey, table: String, key parts: [String]) throws(KeyStoreError) -> [UInt8] {
        do {
            let box = try AES.GCM.SealedBox(combined: blob)
            return Array(try AES.GCM.open(box, using: key(for: identity), authenticating: Self.context(table, parts)))
        } catch {
            throw KeyStoreError(.corrupt, "a sealed \(table) entry does not authenticate")
        }
    }

    static func context(_ table: String, _ parts: [String]) -> [UInt8] {
        Array(([table] + parts).joined(separator: "\u{0}").utf8)
    }
}
