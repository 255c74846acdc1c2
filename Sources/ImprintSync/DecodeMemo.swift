import Crypto

/// The value some stored bytes decode to, remembered by the bytes' SHA-256, so that reading
/// the same bytes again costs a hash instead of a decode (`reloadPersistedState` reads the
/// sync state and the MLS state at the start of every operation; most find them as this
/// object last wrote them). Holds a digest, not the bytes: an MLS state's bytes are secret.
struct DecodeMemo<Value> {
    private var digest: SHA256.Digest?
    private var value: Value?

    /// The value of `bytes`: the remembered one when they are the remembered bytes, else
    /// `decode(bytes)`, which is then remembered.
    mutating func value(of bytes: [UInt8], decode: ([UInt8]) throws -> Value) throws -> Value {
        let hash = SHA256.hash(data: bytes)
        if hash == digest, let value { return value }
        let decoded = try decode(bytes)
        (digest, value) = (hash, decoded)
        return decoded
    }

    /// Remembers that `bytes` (just written) decode to `value`.
    mutating func remember(_ bytes: [UInt8], as value: Value) {
        (digest, self.value) = (SHA256.hash(data: bytes), value)
    }
}
