import Crypto
import _CryptoExtras

/// scrypt of a passphrase (UTF-8) into the 256-bit key that wraps a store's master key.
enum PassphraseKDF {
    static func derive(_ passphrase: String, salt: [UInt8], parameters: ScryptParameters) throws -> SymmetricKey {
        try KDF.Scrypt.deriveKey(from: Array(passphrase.utf8), salt: salt, outputByteCount: 32,
                                 rounds: parameters.rounds, blockSize: parameters.blockSize,
                                 parallelism: parameters.parallelism)
    }
}
