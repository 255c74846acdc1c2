import ImprintMLS

/// The body of a `syncRequest` payload: a member asks the group for the changes it lacks,
/// after a message it was sequenced never arrived (its record is missing from the zone past
/// `SyncOptions.gapTimeout`, or arrived only after its epoch's keys were gone).
///
/// `message` is the engine's own sync message (`Document.generateSyncMessage` from a fresh
/// session: the requester's heads, the hashes it knows it lacks, a Bloom filter of what it
/// has; docs/sync-protocol.md). Only the members named in `targets` answer
/// (``MissingChangesAnswer``): the senders of the missing messages, who hold every change they
/// sent, or, when one of them is no longer in the group, a few other members.
///
/// Layout: `opaque targets<V>` (a vector of `opaque did<V>`), `opaque message<V>`.
struct MissingChangesRequest: Sendable, Hashable {
    /// The DIDs asked to answer.
    var targets: [String]
    /// The engine's sync message.
    var message: [UInt8]

    func encoded() -> [UInt8] {
        var w = TLSWriter(capacity: message.count + 64 * targets.count + 16)
        w.writeStrings(targets)
        w.writeOpaque(message)
        return w.bytes
    }

    /// Throws ``SyncError`` (`.invalidPayload`) for bytes of another layout.
    init(decoding bytes: [UInt8]) throws(SyncError) {
        (targets, message) = try TLSReader.body(bytes, of: "request for missing changes") { r in
            (try r.readStrings(of: "a request for missing changes"), try r.readOpaque())
        }
    }

    init(targets: [String], message: [UInt8]) {
        self.targets = targets
        self.message = message
    }
}

/// The body of a `syncReply` payload: a target's answer to a ``MissingChangesRequest``, the
/// engine's sync message that carries every change the requester lacks (as judged from the
/// request's heads, needs and Bloom filter). Every member applies its changes (ones it has
/// are dropped by hash); the requester also learns that everything the answering member sent
/// before the answer is now here.
///
/// Layout: `opaque requester<V>` (its DID), `opaque message<V>`.
struct MissingChangesAnswer: Sendable, Hashable {
    /// The DID whose request this answers.
    var requester: String
    /// The engine's sync message.
    var message: [UInt8]

    func encoded() -> [UInt8] {
        var w = TLSWriter(capacity: message.count + requester.utf8.count + 8)
        w.writeString(requester)
        w.writeOpaque(message)
        return w.bytes
    }

    /// Throws ``SyncError`` (`.invalidPayload`) for bytes of another layout.
    init(decoding bytes: [UInt8]) throws(SyncError) {
        (requester, message) = try TLSReader.body(bytes, of: "answer with missing changes") { r in
            (try r.readString(of: "an answer with missing changes"), try r.readOpaque())
        }
    }

    init(requester: String, message: [UInt8]) {
        self.requester = requester
        self.message = message
    }
}
