import Crypto
import Foundation
import ImprintEncoding

/// Lowercase hex SHA-256, the contract's hash format.
enum CommitDigest {
    static func hex(_ data: Data) -> String {
        Hex.encode(SHA256.hash(data: data))
    }
}
