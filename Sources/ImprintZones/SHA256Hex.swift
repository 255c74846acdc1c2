import Crypto
import Foundation
import ImprintEncoding

/// SHA-256 as lowercase hex, the zone API's name for assets and payloads.
enum SHA256Hex {
    static func digest(_ bytes: some DataProtocol) -> String {
        hex(SHA256.hash(data: bytes))
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        Hex.encode(digest)
    }

    /// True for exactly 64 lowercase hex digits.
    static func isValid(_ text: String) -> Bool {
        Hex.isLowercaseHex(text, length: 64)
    }
}
