import Crypto
import Foundation
import ImprintBundle
import ImprintEncoding
import ImprintZones

/// An asset of a shared document as this member knows it.
public struct SharedAssetInfo: Sendable, Hashable {
    /// The asset's id: the SHA-256 of its bytes.
    public var id: AssetID
    /// Its size in bytes.
    public var size: UInt64
    /// The DID of the member who shared it first.
    public var sharedBy: String
    /// Whether this member's bundle holds it (false: `fetchAsset` brings it).
    public var isLocal: Bool
}

extension SharedDocument {
    /// Every asset shared through the group (by any member, this one included), sorted by id.
    public func sharedAssets() throws -> [SharedAssetInfo] {
        try state.assets.sorted { $0.key < $1.key }.map { hex, asset in
            let id = try AssetID(hex: hex)
            return SharedAssetInfo(id: id, size: asset.size, sharedBy: asset.sharedBy, isLocal: bundle.store.assets.contains(id))
        }
    }

    /// Brings a shared asset into this member's bundle: its records are fetched one segment at
    /// a time, decrypted into the asset store's temporary file and checked against the id
    /// before the asset is added, so a bundle never holds bytes that are not the asset. Returns false
    /// when the bundle already had it.
    ///
    /// Throws ``SyncError/Code/unknownAsset`` when no member shared `id` (or its key is not in
    /// this identity's key store), ``SyncError/Code/assetNotInZone`` when its records are not
    /// all in the zone yet, ``SyncError/Code/assetTampered`` when they were changed.
    ///
    /// ```swift
    /// for asset in try await doc.sharedAssets() where !asset.isLocal {
    ///     try await doc.fetchAsset(asset.id)
    /// }
    /// try await doc.fetchAssets()   // the same for every one the bundle lacks
    /// ```
    @discardableResult
    public func fetchAsset(_ id: AssetID) async throws -> Bool {
        try await exclusive { try await fetchAssetNow(id) }
    }

    /// Fetches the shared assets `ids` (every one the bundle lacks when nil) as
    /// ``fetchAsset(_:)`` does; returns those it fetched (not those the bundle already had).
    @discardableResult
    public func fetchAssets(_ ids: [AssetID]? = nil) async throws -> [SharedAssetInfo] {
        try await exclusive {
            let shared = try sharedAssets()
            let wanted = ids.map(Set.init) ?? Set(shared.filter { !$0.isLocal }.map(\.id))
            for id in wanted where !shared.contains(where: { $0.id == id }) {
                throw SyncError(.unknownAsset, "no member shared asset \(id.hex) in convo \(convoId)")
            }
            var fetched: [SharedAssetInfo] = []
            for info in shared where wanted.contains(info.id) {
                if try await fetchAssetNow(info.id) { fetched.append(SharedAssetInfo(id: info.id, size: info.size, sharedBy: info.sharedBy, isLocal: true)) }
            }
            return fetched
        }
    }

    func fetchAssetNow(_ id: AssetID) async throws -> Bool {
        let assets = bundle.store.assets
        if assets.contains(id) { return false }
        guard let shared = state.assets[id.hex],
              let key = try account.keyStore.attachmentKey(asset: id.hex, convo: convoId, for: account.identity.did) else {
            throw SyncError(.unknownAsset, "no member shared asset \(id.hex) in convo \(convoId)")
        }
        let cipher = AttachmentCipher(key: SymmetricKey(data: key), asset: id.bytes, size: shared.size)
        let chunks: PayloadChunks
        do {
            chunks = try await records(of: shared, count: cipher.segmentCount)
        } catch let error as ZoneError where error.code == .recordNotFound || error.code == .missingChunk {
            throw SyncError(.assetNotInZone, "asset \(id.hex) is not (all) in the zone yet: \(error)")
        } catch let error as ZoneError {
            throw SyncError(.assetTampered, "the records of asset \(id.hex) are inconsistent: \(error)")
        }
        for (index, record) in chunks.records.enumerated() where record.asset.size != cipher.sealedBytes(ofSegment: index) {
            throw SyncError(.assetTampered, "record \(record.recordName) holds \(record.asset.size) bytes, not \(cipher.sealedBytes(ofSegment: index))")
        }
        // Decrypted straight into the asset store, hashed on the way; kept only if it is the asset.
        let incoming = try assets.incoming()
        var index = 0
        do {
            for try await sealed in chunks.chunks(from: account.zones, zoneId: zoneId) {
                try incoming.write(try cipher.open(sealed, index: index))
                index += 1
            }
        } catch let error as ZoneError where error.code == .assetNotFound {
            throw SyncError(.assetNotInZone, "a segment of asset \(id.hex) is not in the zone: \(error)")
        } catch let error as ZoneError where error.code == .assetCorrupt || error.code == .payloadHashMismatch {
            throw SyncError(.assetTampered, "a segment of asset \(id.hex) was changed: \(error)")
        }
        do {
            try incoming.finish(expecting: id)
        } catch let error as BundleError where error.code == .corrupt {
            throw SyncError(.assetTampered, "asset \(id.hex) decrypted to other bytes")
        }
        return true
    }

    /// The segment records of `shared`, checked: exactly `count` of them, one payload.
    private func records(of shared: SyncState.SharedAsset, count: Int) async throws -> PayloadChunks {
        var records: [ZoneRecord] = []
        for index in 0..<count {
            records.append(try await account.zones.record(zoneId: zoneId, named: ZoneChunker.recordName(baseName: shared.recordBase, index: index)))
        }
        guard records.allSatisfy({ $0.recordType == "attachment" && $0.fields.chunkCount == count }) else {
            throw ZoneError(.inconsistentChunk, "\(shared.recordBase) is not an attachment of \(count) segments")
        }
        return try PayloadChunks(records: records)
    }

    // MARK: Sharing (part of push)

    /// Uploads the bundle's assets that the group does not have yet and tells the members
    /// (one `assets` message with their keys). Content the group already has is never
    /// uploaded again, whoever shared it. Returns how many assets it announced.
    func shareNewAssets() async throws -> Int {
        let local = try bundle.store.assets.list()
        var entries: [AttachmentAnnouncement.Entry] = []
        for asset in local where state.assets[asset.id.hex]?.announced != true {
            entries.append(try await upload(asset))
        }
        guard !entries.isEmpty else { return 0 }
        try await announce(entries)
        for entry in entries { state.assets[Hex.encode(entry.asset)]?.announced = true }
        try saveState()
        return entries.count
    }

    /// Encrypts and uploads one asset as `attachment` records. The key and record names are
    /// saved before the first byte leaves; an upload interrupted and run again reuses them and
    /// produces the same records (AES-GCM with the same key, nonce and bytes), which the zone
    /// takes as retries.
    private func upload(_ asset: AssetStore.Asset) async throws -> AttachmentAnnouncement.Entry {
        let hex = asset.id.hex, me = account.identity.did
        let key: [UInt8]
        let shared: SyncState.SharedAsset
        if let known = state.assets[hex], let saved = try account.keyStore.attachmentKey(asset: hex, convo: convoId, for: me) {
            (key, shared) = (saved, known)
        } else {
            key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
            shared = SyncState.SharedAsset(size: UInt64(asset.size), recordBase: AttachmentAnnouncement.newRecordBase(), sharedBy: did, announced: false)
            try account.keyStore.saveAttachmentKey(key, asset: hex, convo: convoId, for: me)
            state.assets[hex] = shared
            try saveState()
        }
        let cipher = AttachmentCipher(key: SymmetricKey(data: key), asset: asset.id.bytes, size: shared.size)
        let segments = try SealedSegments(path: bundle.store.assets.path(of: asset.id), cipher: cipher)
        _ = try await ZoneChunker(chunkSize: 1 << 20).upload(segments, to: account.zones, zoneId: zoneId, baseName: shared.recordBase,
                                                              recordType: "attachment", fields: ZoneRecordFields(convoId: convoId))
        return AttachmentAnnouncement.Entry(asset: asset.id.bytes, size: shared.size, key: key, recordBase: shared.recordBase)
    }

    /// Sends every asset key known so far, for members who joined in this epoch (after a snapshot).
    func sendKnownAssets() async throws {
        let me = account.identity.did
        var entries: [AttachmentAnnouncement.Entry] = []
        for (hex, shared) in state.assets.sorted(by: { $0.key < $1.key }) where shared.announced {
            guard let key = try account.keyStore.attachmentKey(asset: hex, convo: convoId, for: me) else { continue }
            entries.append(.init(asset: try AssetID(hex: hex).bytes, size: shared.size, key: key, recordBase: shared.recordBase))
        }
        guard !entries.isEmpty else { return }
        try await announce(entries)
    }

    /// Sends `entries` to the group as one `assets` message. `heads: []`: an announcement
    /// carries no changes, so what the group has seen stays as it was.
    private func announce(_ entries: [AttachmentAnnouncement.Entry]) async throws {
        _ = try await send(SyncPayload(kind: .assets, body: AttachmentAnnouncement(entries).encoded), heads: [])
    }

    /// Records assets another member announced: the keys into the key store, where their
    /// records are into the sync state. An asset already known keeps its first announcement.
    func remember(announced entries: [AttachmentAnnouncement.Entry], by author: String) throws {
        let me = account.identity.did
        for entry in entries {
            let hex = Hex.encode(entry.asset)
            guard state.assets[hex] == nil else { continue }
            try account.keyStore.saveAttachmentKey(entry.key, asset: hex, convo: convoId, for: me)
            state.assets[hex] = SyncState.SharedAsset(size: entry.size, recordBase: entry.recordBase, sharedBy: author, announced: true)
        }
        try saveState()
    }
}

/// The sealed segments of one asset file, read and sealed one at a time (at most one segment
/// in memory), for ``ZoneChunker``.
struct SealedSegments: AsyncSequence {
    typealias Element = [UInt8]
    let path: String
    let cipher: AttachmentCipher

    init(path: String, cipher: AttachmentCipher) throws {
        self.path = path
        self.cipher = cipher
    }

    func makeAsyncIterator() -> Iterator { Iterator(path: path, cipher: cipher) }

    struct Iterator: AsyncIteratorProtocol {
        let path: String
        let cipher: AttachmentCipher
        var handle: FileHandle?
        var index = 0

        init(path: String, cipher: AttachmentCipher) {
            self.path = path
            self.cipher = cipher
        }

        mutating func next() async throws -> [UInt8]? {
            guard index < cipher.segmentCount else {
                try? handle?.close()
                return nil
            }
            if handle == nil {
                guard let opened = FileHandle(forReadingAtPath: path) else { throw SyncError(.io, "cannot open \(path)") }
                handle = opened
            }
            let wanted = cipher.plaintextBytes(ofSegment: index)
            var plain: [UInt8] = []
            plain.reserveCapacity(wanted)
            while plain.count < wanted {
                guard let data = try handle?.read(upToCount: wanted - plain.count), !data.isEmpty else {
                    throw SyncError(.io, "\(path) ended before its \(cipher.size) bytes: the asset changed while it was shared")
                }
                plain += data
            }
            defer { index += 1 }
            return try cipher.seal(plain, index: index)
        }
    }
}
