import Crypto
import Foundation
import ImprintDelivery
import ImprintEncoding
import ImprintMLS

/// The write capability of a member's inbox on a server of its own, for one group and
/// epoch: `MLS-Exporter("imprint inbox write capability", <owner DID>, 32)`, base64url.
///
/// Every member of the epoch derives the same value for every other member, so the
/// capability reaches the group inside MLS without a message of its own and changes with
/// every epoch: a removed member cannot derive the next one, a new member can derive it at
/// once. The inbox's owner registers the SHA-256 of its own value on its server
/// (`putInboxCapability`, one name per document) whenever its group enters a new epoch; the
/// server then accepts appends that present it, and no longer the previous epoch's.
/// A capability lets its holder append ciphertext to the inbox, nothing more: it reads
/// nothing, and what is appended must still decrypt and verify as a message of the group.
enum InboxCapability {
    static let label = "imprint inbox write capability"

    /// `owner`'s capability in `group`'s current epoch.
    static func value(for owner: String, in group: MLSGroup) throws -> String {
        let secret = try group.exportSecret(label: label, context: Array(owner.utf8), length: 32)
        return Base64URL.encode(secret)
    }

    /// What the inbox's server stores of `value`: its SHA-256, lowercase hex.
    static func keyHash(_ value: String) -> String {
        Hex.encode(SHA256.hash(data: Data(value.utf8)))
    }
}
