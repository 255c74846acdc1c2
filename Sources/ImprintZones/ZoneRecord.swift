import Foundation

/// One record of a zone: routing metadata and a reference to its ciphertext asset.
///
/// A record never holds document content: `fields` carries only what routing needs, and the
/// bytes live in the content-addressed `asset`. Records come back from `saveRecords`,
/// `record(zoneId:named:)` and the change feed; a deleted record comes back once more in the
/// feed as a tombstone (`deleted == true`, its last fields and asset kept for reference).
public struct ZoneRecord: Sendable, Hashable {
    /// Unique within the zone (1...255 UTF-8 bytes, no control characters).
    public var recordName: String
    /// `change`, `commit`, `snapshot`, `attachment`, `comment`, or another short type name.
    public var recordType: String
    /// Routing metadata, never content.
    public var fields: ZoneRecordFields
    /// The record's ciphertext, by SHA-256.
    public var asset: ZoneAsset
    /// The record's position in its store's change feed (opaque; not a ``ZoneChangeToken``).
    public var changeToken: String
    /// When the store saved (or deleted) the record.
    public var savedAt: Date
    /// True for a tombstone.
    public var deleted: Bool

    public init(recordName: String, recordType: String, fields: ZoneRecordFields, asset: ZoneAsset,
                changeToken: String, savedAt: Date, deleted: Bool = false) {
        self.recordName = recordName
        self.recordType = recordType
        self.fields = fields
        self.asset = asset
        self.changeToken = changeToken
        self.savedAt = savedAt
        self.deleted = deleted
    }
}

/// The metadata a record may carry: what the sync layer needs to route and order records,
/// and nothing of the document. All optional; a chunked payload sets `chunkIndex`,
/// `chunkCount` and `payloadHash` (the SHA-256 of the whole reassembled payload) on every chunk.
public struct ZoneRecordFields: Sendable, Hashable, Codable {
    public var convoId: String?
    public var epoch: Int64?
    public var seq: Int64?
    public var chunkIndex: Int?
    public var chunkCount: Int?
    /// Lowercase hex SHA-256 of the whole payload.
    public var payloadHash: String?
    /// Snapshot records (reviewer links): RFC 3339 time after which the server answers 410.
    public var expiresAt: String?
    /// Snapshot records: lowercase hex SHA-256 of the comment capability the link carries.
    public var commentKeyHash: String?

    public init(convoId: String? = nil, epoch: Int64? = nil, seq: Int64? = nil,
                chunkIndex: Int? = nil, chunkCount: Int? = nil, payloadHash: String? = nil,
                expiresAt: String? = nil, commentKeyHash: String? = nil) {
        self.convoId = convoId
        self.epoch = epoch
        self.seq = seq
        self.chunkIndex = chunkIndex
        self.chunkCount = chunkCount
        self.payloadHash = payloadHash
        self.expiresAt = expiresAt
        self.commentKeyHash = commentKeyHash
    }
}

/// A content-addressed asset: the lowercase hex SHA-256 of its bytes and their count.
public struct ZoneAsset: Sendable, Hashable, Codable {
    public var hash: String
    public var size: Int

    public init(hash: String, size: Int) {
        self.hash = hash
        self.size = size
    }

    /// The asset of `bytes`.
    public init(of bytes: some DataProtocol) {
        self.init(hash: SHA256Hex.digest(bytes), size: bytes.count)
    }
}

/// What a caller saves: a record without the store-assigned parts, its asset either uploaded
/// before (``ZoneRecordDraft/Asset/uploaded(_:)``) or carried inline (small assets; the store
/// stores the bytes as if uploaded).
public struct ZoneRecordDraft: Sendable, Hashable {
    public enum Asset: Sendable, Hashable {
        /// An asset already in the zone (from `uploadAsset`).
        case uploaded(ZoneAsset)
        /// Bytes stored with the save (at most ``ZoneLimits/inlineAssetBytes``).
        case inline([UInt8])

        /// The reference the record will hold.
        public var reference: ZoneAsset {
            switch self {
            case .uploaded(let asset): asset
            case .inline(let bytes): ZoneAsset(of: bytes)
            }
        }
    }

    public var recordName: String
    public var recordType: String
    public var fields: ZoneRecordFields
    public var asset: Asset

    public init(recordName: String, recordType: String, fields: ZoneRecordFields = ZoneRecordFields(), asset: Asset) {
        self.recordName = recordName
        self.recordType = recordType
        self.fields = fields
        self.asset = asset
    }
}
