import Crypto

enum SHA256Digest {
    @inline(__always)
    static func of(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }
}
