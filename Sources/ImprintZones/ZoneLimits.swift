/// The limits every store enforces alike, so that code written against one store works on all.
public enum ZoneLimits {
    /// Zone ids are 1...80 UTF-8 bytes: every `doc_<convoId>` and `inbox_<did:key>` fits, and
    /// the folder store's escaped directory name stays under 255 bytes.
    public static let zoneIdBytes = 80
    /// Record names are 1...255 UTF-8 bytes.
    public static let recordNameBytes = 255
    /// Record types are 1...64 ASCII letters, digits, `_`, `-` or `.`.
    public static let recordTypeBytes = 64
    /// One asset: 50 MiB (the zone API's `attachment` ceiling; chunks are 1 MiB by default).
    public static let maximumAssetBytes = 50 << 20
    /// An inline asset in `saveRecords`: 48 KiB (its base64 must fit the API's body limit).
    public static let inlineAssetBytes = 48 << 10
    /// Records in one `saveRecords` batch, and names in one `deleteRecords`: what the zone
    /// service accepts (`ZoneServiceConfiguration.maxRecordsPerSave`), so that a batch every
    /// store takes is one the server takes too (`ZoneChunker` splits by it).
    public static let maximumBatchRecords = 400
    /// The encoded size a client keeps one save request under (the zone service takes 2 MiB).
    static let saveBodyBudget = 3 << 19
    /// The most saves and deletes a folder zone's entry may hold when read: entries written
    /// before the batch limit was the service's (up to 1000) stay readable.
    static let maximumStoredBatchRecords = 1000
    /// `fetchChanges` page sizes.
    public static let fetchLimitRange = 1...1000
    public static let defaultFetchLimit = 200
}

/// The argument rules of ``ZoneLimits``, checked by every store before it does anything.
enum ZoneRules {
    static func checkZoneId(_ zoneId: String) throws {
        let count = zoneId.utf8.count
        guard count >= 1, count <= ZoneLimits.zoneIdBytes, !containsControl(zoneId) else {
            throw ZoneError(.invalidArgument, "zone id must be 1...\(ZoneLimits.zoneIdBytes) UTF-8 bytes without control characters")
        }
    }

    static func checkRecordName(_ name: String) throws {
        let count = name.utf8.count
        guard count >= 1, count <= ZoneLimits.recordNameBytes, !containsControl(name) else {
            throw ZoneError(.invalidArgument, "record name must be 1...\(ZoneLimits.recordNameBytes) UTF-8 bytes without control characters",
                            recordName: String(name.prefix(64)))
        }
        // Nothing a file system or shell reads as a path (the zone service refuses these too).
        guard !name.hasPrefix("."), !name.hasPrefix("~"), !name.contains("/"), !name.contains("\\") else {
            throw ZoneError(.invalidArgument, "record name must not start with '.' or '~' or contain a slash: it could be read as a path",
                            recordName: String(name.prefix(64)))
        }
    }

    static func checkRecordType(_ type: String, recordName: String) throws {
        let ok = type.utf8.count >= 1 && type.utf8.count <= ZoneLimits.recordTypeBytes && type.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
        guard ok else { throw ZoneError(.invalidArgument, "record type must be 1...64 of [A-Za-z0-9_.-]", recordName: recordName) }
    }

    static func checkFields(_ fields: ZoneRecordFields, recordName: String) throws {
        func fail(_ why: String) -> ZoneError { ZoneError(.invalidArgument, why, recordName: recordName) }
        if let convoId = fields.convoId, convoId.utf8.count > 256 || containsControl(convoId) { throw fail("convoId is not a short printable string") }
        if let epoch = fields.epoch, epoch < 0 { throw fail("epoch is negative") }
        if let seq = fields.seq, seq < 0 { throw fail("seq is negative") }
        if let count = fields.chunkCount, count < 1 || count > 1_000_000 { throw fail("chunkCount out of 1...1000000") }
        if let index = fields.chunkIndex {
            guard index >= 0, index < (fields.chunkCount ?? Int.max) else { throw fail("chunkIndex out of range") }
        }
        if let hash = fields.payloadHash, !SHA256Hex.isValid(hash) { throw fail("payloadHash is not lowercase hex SHA-256") }
    }

    static func checkAsset(_ asset: ZoneAsset, recordName: String?) throws {
        guard SHA256Hex.isValid(asset.hash), asset.size >= 0, asset.size <= ZoneLimits.maximumAssetBytes else {
            throw ZoneError(.invalidArgument, "asset must be lowercase hex SHA-256 and 0...\(ZoneLimits.maximumAssetBytes) bytes", recordName: recordName)
        }
    }

    static func checkDraft(_ draft: ZoneRecordDraft) throws {
        try checkRecordName(draft.recordName)
        try checkRecordType(draft.recordType, recordName: draft.recordName)
        try checkFields(draft.fields, recordName: draft.recordName)
        switch draft.asset {
        case .uploaded(let asset): try checkAsset(asset, recordName: draft.recordName)
        case .inline(let bytes):
            guard bytes.count <= ZoneLimits.inlineAssetBytes else {
                throw ZoneError(.payloadTooLarge, "inline asset over \(ZoneLimits.inlineAssetBytes) bytes", recordName: draft.recordName)
            }
        }
    }

    /// Checks a batch: size, each draft, and no name twice.
    static func checkBatch(_ drafts: [ZoneRecordDraft]) throws {
        guard !drafts.isEmpty, drafts.count <= ZoneLimits.maximumBatchRecords else {
            throw ZoneError(.invalidArgument, "a batch holds 1...\(ZoneLimits.maximumBatchRecords) records")
        }
        var names = Set<String>()
        for draft in drafts {
            try checkDraft(draft)
            guard names.insert(draft.recordName).inserted else {
                throw ZoneError(.invalidArgument, "record named twice in one batch", recordName: draft.recordName)
            }
        }
    }

    static func checkNames(_ names: [String]) throws {
        guard !names.isEmpty, names.count <= ZoneLimits.maximumBatchRecords else {
            throw ZoneError(.invalidArgument, "1...\(ZoneLimits.maximumBatchRecords) names at once")
        }
        for name in names { try checkRecordName(name) }
    }

    static func checkLimit(_ limit: Int) throws {
        guard ZoneLimits.fetchLimitRange.contains(limit) else {
            throw ZoneError(.invalidArgument, "limit must be in 1...1000")
        }
    }

    static func checkAssetBytes(_ count: Int) throws {
        guard count <= ZoneLimits.maximumAssetBytes else {
            throw ZoneError(.payloadTooLarge, "asset of \(count) bytes over \(ZoneLimits.maximumAssetBytes)")
        }
    }

    private static func containsControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}
