import Crypto
import Foundation

/// Lowercase hex SHA-256, the contract's hash format.
enum CommitDigest {
    static func hex(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}
