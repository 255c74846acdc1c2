import Foundation
import ImprintFiles

/// What one identity remembers of one shared document besides its MLS state: where the
/// document lives, how far it has sent and received, the gaps. Nothing
/// secret (the MLS state and the processed cursor are in the key store); kept as
/// `<home>/sync/<convoId>.json`, written atomically after each step.
///
/// The crash rules (docs/sync.md) rest on the order of writes: an outbox message
/// (`OutboxMessage`) is written only after the advanced ratchet is in the key store;
/// `sharedHeads` advances only after the record is in the zone; received changes are in the
/// bundle before the cursor that passes them is committed.
struct SyncState: Codable, Sendable, Hashable {
    /// A seq the DS sequenced whose record is not (yet) in the zone.
    struct Gap: Codable, Sendable, Hashable {
        var seq: Int
        var epoch: UInt64
        var firstSeen: Date
        var sender: String
    }

    var convoId: String
    var did: String
    var serverURL: String
    var serviceDID: String
    /// The bundle this identity keeps the document in.
    var bundlePath: String
    /// Heads of everything this member has sent or received through the group: what the
    /// others have seen. Local changes are `changes(since: sharedHeads)`.
    var sharedHeads: [String] = []
    /// The epoch this identity joined in (it can decrypt nothing older).
    var joinedEpoch: UInt64 = 0
    /// DIDs allowed to add and remove members.
    var admins: [String] = []
    /// App messages above the processed cursor that are already applied (out of order).
    var processedAbove: [Int] = []
    /// Seqs whose records have not arrived.
    var gaps: [Gap] = []
    /// Own changes a snapshot lacked: sent again in the current epoch at the next push.
    var resend: [String] = []
    /// An Add commit of this member's was accepted, its snapshot not sent yet.
    var snapshotOwed = false
    /// SHA-256 hex of a commit of this member's that the Delivery Service has not
    /// acknowledged yet (its resulting state is in the key store as `<convo>#pending`).
    var pendingCommitHash: String?
    /// Whether that commit adds members (a snapshot is owed once it is accepted).
    var pendingCommitAdds = false
    /// Why this identity can no longer use the convo (removed, left), once known.
    var endedReason: String?
    /// Problems seen while pulling that need a person's attention (roster disagreements,
    /// forked histories, refused commits), newest last, at most 20.
    var alerts: [String] = []
    /// The highest seq the Delivery Service gave a message of this member's (so a message of
    /// this DID above it was sent by another copy of this home).
    var lastSentSeq = 0
    /// Why this copy of the home must not send (another copy of it sent; its MLS state may
    /// reuse their generations), or nil.
    var staleReason: String?
    /// The last time a pull completed.
    var lastPull: Date?
    /// Epoch authenticators (hex, truncated) of recent epochs, to compare with other members'.
    var authenticators: [String: String] = [:]

    static func directory(home: String) -> String { home + "/sync" }
    static func path(home: String, convoId: String) -> String { directory(home: home) + "/\(convoId).json" }

    static func load(home: String, convoId: String) throws(SyncError) -> SyncState? {
        let path = path(home: home, convoId: convoId)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try JSONDecoder.sync.decode(SyncState.self, from: Data(AtomicFile.read(path, limit: 16 << 20)))
        } catch {
            throw SyncError(.io, "\(path) is unreadable: \(error)")
        }
    }

    func save(home: String) throws(SyncError) {
        do {
            try FileManager.default.createDirectory(atPath: Self.directory(home: home), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try AtomicFile.write(Array(JSONEncoder.sync.encode(self)), to: Self.path(home: home, convoId: convoId), mode: 0o600)
        } catch {
            throw SyncError(.io, "cannot save the sync state of \(convoId): \(error)")
        }
    }
}

extension JSONEncoder {
    static var sync: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

extension JSONDecoder {
    static var sync: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
