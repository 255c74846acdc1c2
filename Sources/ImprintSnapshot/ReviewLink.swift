import Crypto
import Foundation
import ImprintDelivery
import ImprintEncoding
import ImprintZones

/// The link form of a reviewer snapshot: the sealed envelope in a snapshot zone record
/// (`share_<snapshotId>`, zone-api.md) whose name is a random capability, and a URL to the
/// server's viewer page whose fragment carries the rest (browsers never send a fragment):
///
/// ```
/// <server>/review#v1.<snapshotId>.<recordName>.<commentCapability>.<content key, base64url>
/// ```
///
/// Whoever holds the link reads that record without an account and appends `comment` records
/// to the zone (each sealed to the owner's comment key); only the owner lists and reads the
/// comments, deletes the record (the link answers 410 from then on) or lets it expire (the
/// server answers 410 after `expiresAt`).
///
/// ```swift
/// let link = try await ReviewLink.publish(snapshot, zones: account.zones, server: account.serverURL, expires: nil)
/// print(link.url)
/// let sealed = try await ReviewLink.comments(zoneId: link.zoneId, zones: account.zones)
/// ```
public struct ReviewLink: Sendable, Hashable {
    public var server: String
    public var snapshotId: String
    public var zoneId: String
    public var recordName: String
    public var commentCapability: String
    /// The content key, base64url without padding (43 characters).
    public var key: String

    /// The link a reviewer opens.
    public var url: String {
        server.trimmingTrailingSlashes + "/review#v1.\(snapshotId).\(recordName).\(commentCapability).\(key)"
    }

    /// The largest envelope a link stores: one record asset (the zone service's default limit).
    public static let maximumBytes = 1 << 20

    /// The zone of a snapshot.
    public static func zoneId(snapshotId: String) -> String { "share_" + snapshotId }

    /// Stores the snapshot's envelope on the server and returns its link. The snapshot must
    /// have been exported for the link form (no password; `link` set to this server).
    public static func publish(_ snapshot: ExportedReviewSnapshot, zones: any ZoneStore, server: String,
                               expires: Date?) async throws -> ReviewLink {
        guard snapshot.envelope.password == nil else { throw ReviewSnapshotError(.invalidArgument, "a password-form snapshot has no link") }
        let zoneId = zoneId(snapshotId: snapshot.snapshotId)
        let stored = try JSONEncoder().encode(snapshot.envelope)
        guard stored.count <= maximumBytes else {
            throw ReviewSnapshotError(.tooLarge, "the snapshot is \(stored.count) bytes, over the \(maximumBytes)-byte record limit of a link; use the password form (a file) or leave out images")
        }
        let recordName = Hex.encode(ReviewCipher.randomBytes(16))
        let capability = Hex.encode(ReviewCipher.randomBytes(16))
        _ = try await zones.createZone(zoneId, convoId: nil)
        let asset = try await zones.uploadAsset(zoneId: zoneId, bytes: Array(stored))
        _ = try await zones.saveRecords(zoneId: zoneId, [ZoneRecordDraft(
            recordName: recordName, recordType: "snapshot",
            fields: ZoneRecordFields(expiresAt: expires.map { RFC3339.string(from: $0) }, commentKeyHash: Hex.encode(SHA256.hash(data: Array(capability.utf8)))),
            asset: .uploaded(asset))])
        return ReviewLink(server: server, snapshotId: snapshot.snapshotId, zoneId: zoneId, recordName: recordName,
                          commentCapability: capability, key: snapshot.contentKeyText)
    }

    /// Every comment posted to the snapshot's zone so far, still sealed (open them with
    /// ``CommentSealing/open(_:snapshotId:with:)``); records that are not a sealed comment are
    /// skipped and counted.
    public static func comments(zoneId: String, zones: any ZoneStore) async throws -> (items: [ReviewCommentFile.SealedComment], skipped: Int) {
        var items: [ReviewCommentFile.SealedComment] = []
        var skipped = 0
        var token: ZoneChangeToken?
        while true {
            let batch = try await zones.fetchChanges(zoneId: zoneId, since: token, limit: 500)
            for record in batch.records where record.recordType == "comment" && !record.deleted {
                guard record.asset.size <= ReviewCommentFile.maxItemBytes * 2,
                      let bytes = try? await zones.fetchAsset(zoneId: zoneId, hash: record.asset.hash),
                      let item = try? JSONDecoder().decode(ReviewCommentFile.SealedComment.self, from: Data(bytes)) else {
                    skipped += 1
                    continue
                }
                items.append(item)
            }
            token = batch.changeToken
            if !batch.moreComing { break }
        }
        return (items, skipped)
    }

    /// Deletes the snapshot record: the link answers 410 from now on. Comments already posted
    /// stay for the owner to import.
    @discardableResult
    public static func revoke(zoneId: String, recordName: String, zones: any ZoneStore) async throws -> Bool {
        try await zones.deleteRecords(zoneId: zoneId, names: [recordName]).contains(recordName)
    }

}

extension String {
    var trimmingTrailingSlashes: String {
        var s = self
        while s.hasSuffix("/") { s.removeLast() }
        return s
    }
}
