import Crypto
import Foundation

/// SHA-256 as lowercase hex, the zone API's name for assets and payloads.
// TODO(leaf): encode through ImprintEncoding's hex codec once that leaf lands.
enum SHA256Hex {
    static func digest(_ bytes: some DataProtocol) -> String {
        hex(SHA256.hash(data: bytes))
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        let alphabet = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in digest {
            out.append(alphabet[Int(byte >> 4)])
            out.append(alphabet[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True for exactly 64 lowercase hex digits.
    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
