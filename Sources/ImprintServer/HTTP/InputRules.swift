import Foundation
import ImprintDelivery

/// Shape checks for input fields, so that nothing malformed reaches a store.
package enum InputRules {
    package static let cipherSuites = 1...0xFFFF
    package static let maxDIDLength = 512

    package static func did(_ did: String, field: String) throws {
        let scalars = did.unicodeScalars
        guard did.utf8.count <= maxDIDLength, did.hasPrefix("did:") else {
            throw DeliveryError.invalidRequest("\(field) is not a DID")
        }
        let parts = did.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[1].isEmpty, !parts[2].isEmpty,
              parts[1].unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) }),
              scalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._:%-".unicodeScalars.contains($0)) }),
              !did.hasSuffix(":")
        else { throw DeliveryError.invalidRequest("\(field) is not a DID") }
    }

    /// Checked on every message, so byte by byte (any non-ASCII byte is outside the set).
    package static func convoId(_ id: String) throws {
        guard (1...128).contains(id.utf8.count), id.utf8.allSatisfy(isConvoIdByte)
        else { throw DeliveryError.invalidRequest("convoId must be 1-128 characters of [A-Za-z0-9._~:-]") }
    }

    private static func isConvoIdByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// `sendEphemeral`'s rules, shared by its POST and the ephemeral socket's sends: epoch not
    /// negative, data 1 to `maxBytes` bytes, kind absent or of ``EphemeralKind``'s form.
    package static func ephemeral(_ input: SendEphemeralInput, maxBytes: Int) throws {
        guard input.epoch >= 0 else { throw DeliveryError.invalidRequest("epoch must not be negative") }
        guard (1...maxBytes).contains(input.data.count) else {
            throw DeliveryError.invalidRequest("data must be 1 to \(maxBytes) bytes")
        }
        if let kind = input.kind, !EphemeralKind.isValid(kind) {
            throw DeliveryError.invalidRequest("kind must be 1 to 32 characters of a-z, 0-9 and -")
        }
    }

    package static func hash(_ hash: String) throws {
        guard hash.utf8.count == 64, hash.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw DeliveryError.invalidRequest("hash must be 64 lowercase hex digits")
        }
    }

    /// v1.1 `sendMessage.clientMessageId`: 1-64 printable ASCII characters.
    package static func clientMessageId(_ id: String) throws {
        guard (1...64).contains(id.utf8.count), id.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) else {
            throw DeliveryError.invalidRequest("clientMessageId must be 1-64 printable ASCII characters")
        }
    }

    /// v1.1 `sendMessage.commit`: only on a commit, non-empty, and its SHA-256 hex is `hash`.
    package static func commitBytes(_ commit: Data, type: MessageType, hash: String) throws {
        guard type == .commit else { throw DeliveryError.invalidRequest("commit is only sent with messageType commit") }
        try nonEmpty(commit, field: "commit")
        guard CommitDigest.hex(commit) == hash else { throw DeliveryError.invalidRequest("hash is not the SHA-256 of commit") }
    }

    package static func cipherSuite(_ suite: Int) throws {
        guard cipherSuites.contains(suite) else { throw DeliveryError.invalidRequest("cipherSuite must be in 1...65535") }
    }

    package static func epoch(_ epoch: Int) throws {
        guard epoch >= 0 else { throw DeliveryError.invalidRequest("epoch must not be negative") }
    }

    /// Free text: bounded, no control characters (PostgreSQL text refuses NUL).
    package static func text(_ text: String, field: String, maxBytes: Int) throws {
        guard text.utf8.count <= maxBytes else { throw DeliveryError.invalidRequest("\(field) longer than \(maxBytes) bytes") }
        guard text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) else {
            throw DeliveryError.invalidRequest("\(field) contains control characters")
        }
    }

    package static func nonEmpty(_ data: Data, field: String) throws {
        guard !data.isEmpty else { throw DeliveryError.invalidRequest("\(field) is empty") }
    }
}
