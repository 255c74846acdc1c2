/// The part of `saveRecords` every local store shares: checking a whole batch against what is
/// stored before anything changes, so the batch is all or nothing.
///
/// For each draft, in order: a live record of that name with the same asset hash is the
/// stored record (an idempotent retry); with another hash the batch fails with
/// ``ZoneError/Code/recordExists``; otherwise the draft is new, and an uploaded asset it
/// references must be in the zone with its size (``ZoneError/Code/assetNotFound``).
enum ZoneSavePlan {
    /// The stored record for each draft that is a retry, nil for each that is new.
    static func check(_ drafts: [ZoneRecordDraft], stored: (String) -> ZoneRecord?,
                      holdsAsset: (ZoneAsset) throws -> Bool) throws -> [ZoneRecord?] {
        try ZoneRules.checkBatch(drafts)
        return try drafts.map { draft in
            if let stored = stored(draft.recordName), !stored.deleted {
                guard stored.asset.hash == draft.asset.reference.hash else {
                    throw ZoneError(.recordExists, "stored with asset \(stored.asset.hash)", recordName: draft.recordName)
                }
                return stored
            }
            if case .uploaded(let asset) = draft.asset, try !holdsAsset(asset) {
                throw ZoneError(.assetNotFound, "asset \(asset.hash) (\(asset.size) bytes) not uploaded", recordName: draft.recordName)
            }
            return nil
        }
    }
}
