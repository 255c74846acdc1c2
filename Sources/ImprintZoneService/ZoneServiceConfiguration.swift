/// The zone service's limits (the contract's defaults) and storage options.
public struct ZoneServiceConfiguration: Sendable {
    /// `saveRecords` body.
    public var saveBodyLimit = 2 << 20
    /// Every other JSON body.
    public var bodyLimit = 64 << 10
    /// Inline `assetData`, decoded, per record.
    public var inlineAssetLimit = 48 << 10
    /// `uploadAsset` for record assets.
    public var assetLimit = 1 << 20
    /// `uploadAsset` for `attachment` records (`?recordType=attachment`).
    public var attachmentLimit = 50 << 20
    /// Bytes of live record assets an owner's zones may hold.
    public var quotaBytes = 20 << 30
    public var maxChangesPerPage = 1000
    public var defaultChangesPerPage = 200
    public var maxRecordsPerSave = 400
    /// Write capabilities one inbox may hold (`putInboxCapability`; its owner uses one per
    /// shared document whose group lives on another server).
    public var maxInboxCapabilities = 1_000
    /// Encoded `fields` per record.
    public var fieldsLimit = 4096
    /// An unauthenticated comment's inline asset.
    public var commentLimit = 16 << 10
    /// Unauthenticated comment appends per snapshot zone: per second, and burst.
    public var commentRate: Double = 1
    public var commentBurst: Double = 20
    /// Tombstones older than this are purged; tokens from before them answer 410.
    public var tombstoneRetentionSeconds: Int64 = 30 * 24 * 3600
    /// How often the server compacts the shared zones whose members all passed a newer
    /// checkpoint (`ZoneCompaction`); nil: only on request (`compactZone`).
    public var compactionInterval: Duration? = .seconds(60)
    /// The viewer page served at `/review` for reviewer links; nil: no such route.
    public var reviewPage: ReviewViewerPage?

    public init() {}
}
