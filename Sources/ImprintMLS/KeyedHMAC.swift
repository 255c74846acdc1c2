import Crypto

/// HMAC-SHA256 (RFC 2104) with the key already absorbed, on swift-crypto's
/// SHA-256: a key used for several MACs (a ratchet secret gives a key, a nonce
/// and the next secret) is processed once, and each MAC costs four SHA-256
/// blocks and no per-call key handling.
struct KeyedHMAC: Sendable {
    /// SHA-256 states after the (key XOR ipad) and (key XOR opad) blocks.
    private let inner: SHA256, outer: SHA256
    private static let blockSize = 64

    init(key: [UInt8]) {
        var block = [UInt8](repeating: 0, count: KeyedHMAC.blockSize)
        if key.count > KeyedHMAC.blockSize {
            SHA256.hash(data: key).withUnsafeBytes { for (i, b) in $0.enumerated() { block[i] = b } }
        } else {
            block.replaceSubrange(0 ..< key.count, with: key)
        }
        for i in block.indices { block[i] ^= 0x36 }
        var inner = SHA256()
        block.withUnsafeBytes { inner.update(bufferPointer: $0) }
        for i in block.indices { block[i] ^= 0x36 ^ 0x5c }
        var outer = SHA256()
        block.withUnsafeBytes { outer.update(bufferPointer: $0) }
        for i in block.indices { block[i] = 0 }
        self.inner = inner
        self.outer = outer
    }

    /// HMAC(key, message), the message given as consecutive parts.
    func authenticationCode(_ parts: [UInt8]...) -> [UInt8] {
        var h = inner
        for p in parts { p.withUnsafeBytes { h.update(bufferPointer: $0) } }
        var o = outer
        h.finalize().withUnsafeBytes { o.update(bufferPointer: $0) }
        return o.finalize().withUnsafeBytes { Array($0) }
    }

    /// HKDF-Expand (RFC 5869 §2.3) with this key as PRK, for `length` up to
    /// one hash length: the first block T(1) = HMAC(PRK, info || 0x01).
    func expandFirstBlock(info: [UInt8], length: Int) -> [UInt8] {
        precondition(length <= 32, "one HKDF block")
        let t1 = authenticationCode(info, KeyedHMAC.counterOne)
        return length == t1.count ? t1 : Array(t1.prefix(length))
    }

    private static let counterOne: [UInt8] = [1]
}
