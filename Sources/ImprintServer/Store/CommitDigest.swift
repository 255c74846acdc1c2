import Crypto
import Foundation
import ImprintEncoding

/// Lowercase hex SHA-256, the contract's hash format.
package enum CommitDigest {
    package static func hex(_ data: Data) -> String {
        hex(SHA256.hash(data: data))
    }

    package static func hex(_ digest: SHA256.Digest) -> String {
        Hex.encode(digest)
    }
}
