import Foundation

/// A zone store in a plain directory that Syncthing, Dropbox, NFS or any folder-sync tool may
/// share between machines. docs/zones.md has the layout and the change-token design.
///
/// Each instance writes as one `writer` (a device id, unique per machine) and only ever
/// creates files of its own: a creation marker, its numbered change-log entries (one atomic
/// batch each) and the assets it uploaded. Every file is published whole (temporary + fsync +
/// hard link that never replaces + directory fsync), so a reader, or a sync tool, sees a file
/// complete or not at all, and two machines never write the same file. Records are what all
/// writers' entries say, folded in an order every machine agrees on (`FolderZoneState`).
///
/// Reading tolerates what sync tools do: files of other writers arrive late and out of order
/// (the change token is a version vector with holes, `FolderChangeToken`); their temporary
/// files and conflict copies do not have the shapes the store reads and are ignored; a
/// truncated or altered entry is reported in ``ZoneChangeBatch/damaged`` as
/// ``ZoneError/Code/damagedRecord`` naming the file and hides nothing else; an altered asset
/// is ``ZoneError/Code/assetCorrupt`` (another writer's intact copy is used when there is one).
///
/// Subscriptions poll the zone's file names and sizes every `pollInterval`.
///
/// ```swift
/// // On each machine, over the folder the sync tool shares:
/// let store = try FolderZoneStore(root: "/home/me/Sync/imprint-zones", writer: deviceID)
/// let asset = try await store.uploadAsset(zoneId: "doc_\(convoId)", bytes: ciphertext)
/// _ = try await store.saveRecords(zoneId: "doc_\(convoId)", [
///     ZoneRecordDraft(recordName: "c-\(seq)", recordType: "change",
///                     fields: ZoneRecordFields(convoId: convoId, epoch: epoch, seq: seq), asset: .uploaded(asset)),
/// ])
/// ```
public actor FolderZoneStore: ZoneStore {
    public nonisolated let root: String
    public nonisolated let writer: String
    public nonisolated let pollInterval: Duration
    private let layout: FolderZoneLayout
    private let now: @Sendable () -> Date
    private var cache: [String: (FolderFiles.Stamp, Result<FolderZoneEntry, ZoneError>)] = [:]

    /// - Parameters:
    ///   - root: the shared directory (created if absent).
    ///   - writer: this machine's id: 1...64 of `a-z`, `0-9`, `-`. Two machines must never share one.
    ///   - pollInterval: how often a subscription looks for other writers' files.
    ///   - now: the clock for records' `savedAt` and token expiry (tests move it).
    public init(root: String, writer: String, pollInterval: Duration = .milliseconds(500),
                now: @escaping @Sendable () -> Date = { Date() }) throws {
        guard FolderZoneLayout.isWriterID(writer) else {
            throw ZoneError(.invalidArgument, "writer id must be 1...64 of a-z, 0-9, - (not starting with -)")
        }
        self.root = root
        self.writer = writer
        self.pollInterval = pollInterval
        self.now = now
        layout = FolderZoneLayout(root: root)
        try FolderFiles.makeDirectories(layout.zonesPath)
    }

    // MARK: Zones

    private struct Marker: Codable {
        var incarnation: String
        var createdAt: Int64
        var convoId: String?
    }

    public func createZone(_ zoneId: String, convoId: String?) throws -> ZoneInfo {
        try ZoneRules.checkZoneId(zoneId)
        let path = layout.zonePath(zoneId)
        guard try markers(zoneId).isEmpty else { throw ZoneError(.zoneExists, zoneId) }
        try FolderFiles.makeDirectories(path)
        let createdAt = now()
        let marker = Marker(incarnation: UUID().uuidString.lowercased(), createdAt: Int64(createdAt.timeIntervalSince1970 * 1000),
                            convoId: convoId)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard try FolderFiles.publishNew(Array(try encoder.encode(marker)), at: layout.markerPath(zoneId, writer: writer)) else {
            throw ZoneError(.zoneExists, zoneId)
        }
        return ZoneInfo(zoneId: zoneId, owner: nil, kind: ZoneInfo.kind(of: zoneId), createdAt: createdAt)
    }

    /// Removes the zone's directory (moved aside in one rename first). The one operation that
    /// removes other writers' files: the sync tool carries the removal to the other machines.
    public func deleteZone(_ zoneId: String) throws {
        try ZoneRules.checkZoneId(zoneId)
        guard try !markers(zoneId).isEmpty else { throw ZoneError(.zoneNotFound, zoneId) }
        try FolderFiles.removeTree(layout.zonePath(zoneId), via: layout.zonesPath + "/.deleted-\(UUID().uuidString.lowercased())")
        cache = cache.filter { !$0.key.hasPrefix(layout.zonePath(zoneId) + "/") }
    }

    /// The markers' file names and decoded contents (nil for a marker that does not decode).
    private func markers(_ zoneId: String) throws -> [(writer: String, marker: Marker?)] {
        let path = layout.zonePath(zoneId)
        return try FolderFiles.list(path).compactMap { name in
            guard let writer = FolderZoneLayout.markerWriter(fileName: name) else { return nil }
            let bytes = try? FolderFiles.read(path + "/" + name, limit: 4096)
            return (writer, bytes.flatMap { try? JSONDecoder().decode(Marker.self, from: Data($0)) })
        }
    }

    /// The zone's incarnation: the smallest creation id among its markers (two machines that
    /// created it concurrently agree once both markers arrived).
    private func incarnation(_ zoneId: String) throws -> String {
        try ZoneRules.checkZoneId(zoneId)
        let found = try markers(zoneId)
        guard !found.isEmpty else { throw ZoneError(.zoneNotFound, zoneId) }
        return found.compactMap { $0.marker?.incarnation }.min() ?? "damaged"
    }

    // MARK: Assets

    public func uploadAsset(zoneId: String, bytes: [UInt8]) throws -> ZoneAsset {
        _ = try incarnation(zoneId)
        try ZoneRules.checkAssetBytes(bytes.count)
        let asset = ZoneAsset(of: bytes)
        try storeAsset(zoneId, asset, bytes)
        return asset
    }

    private func storeAsset(_ zoneId: String, _ asset: ZoneAsset, _ bytes: [UInt8]) throws {
        let directory = layout.assetsPath(zoneId, writer: writer)
        if FolderFiles.stamp(directory + "/" + asset.hash)?.size == Int64(asset.size) { return }
        try FolderFiles.makeDirectories(directory)
        _ = try FolderFiles.publishNew(bytes, at: directory + "/" + asset.hash)
    }

    /// Copies of an asset by writer, this writer's first.
    private func assetCopies(_ zoneId: String, _ hash: String) throws -> [String] {
        let writers = try FolderFiles.list(layout.assetsPath(zoneId)).filter(FolderZoneLayout.isWriterID)
        let ordered = writers.filter { $0 == writer } + writers.filter { $0 != writer }.sorted()
        return ordered.map { layout.assetsPath(zoneId, writer: $0) + "/" + hash }.filter { FolderFiles.stamp($0) != nil }
    }

    public func fetchAsset(zoneId: String, hash: String) throws -> [UInt8] {
        _ = try incarnation(zoneId)
        guard SHA256Hex.isValid(hash) else { throw ZoneError(.invalidArgument, "asset hash is not lowercase hex SHA-256") }
        let copies = try assetCopies(zoneId, hash)
        guard !copies.isEmpty else { throw ZoneError(.assetNotFound, hash) }
        var failure = ZoneError(.assetCorrupt, hash)
        for path in copies {
            do {
                let bytes = try FolderFiles.read(path, limit: ZoneLimits.maximumAssetBytes)
                if SHA256Hex.digest(bytes) == hash { return bytes }
                failure = ZoneError(.assetCorrupt, "\(path) does not hash to its name")
            } catch let error as ZoneError {
                failure = ZoneError(.assetCorrupt, "\(path): \(error.context)")
            }
        }
        throw failure
    }

    // MARK: Records

    public func saveRecords(zoneId: String, _ drafts: [ZoneRecordDraft]) throws -> [ZoneRecord] {
        _ = try incarnation(zoneId)
        let (entries, _) = try loadEntries(zoneId)
        let state = FolderZoneState(entries: entries)
        let results = try ZoneSavePlan.check(drafts, stored: { state.records[$0] }, holdsAsset: { asset in
            try assetCopies(zoneId, asset.hash).contains { FolderFiles.stamp($0)?.size == Int64(asset.size) }
        })
        let new = zip(drafts, results).filter { $0.1 == nil }.map(\.0)
        guard !new.isEmpty else { return results.map { $0! } }
        for draft in new {
            if case .inline(let bytes) = draft.asset { try storeAsset(zoneId, draft.asset.reference, bytes) }
        }
        let saves = new.map { FolderZoneEntry.Save(recordName: $0.recordName, recordType: $0.recordType, fields: $0.fields, asset: $0.asset.reference) }
        let entry = try append(zoneId, entries: entries, floor: state.newestSavedAt, saves: saves, deletes: [])
        let savedAt = Date(timeIntervalSince1970: Double(entry.savedAt) / 1000)
        return zip(drafts, results).map { draft, existing in
            existing ?? ZoneRecord(recordName: draft.recordName, recordType: draft.recordType, fields: draft.fields,
                                   asset: draft.asset.reference, changeToken: entry.recordChangeToken, savedAt: savedAt)
        }
    }

    public func deleteRecords(zoneId: String, names: [String]) throws -> [String] {
        _ = try incarnation(zoneId)
        try ZoneRules.checkNames(names)
        let (entries, _) = try loadEntries(zoneId)
        let state = FolderZoneState(entries: entries)
        var seen = Set<String>()
        let live = names.filter { state.records[$0].map { !$0.deleted } ?? false && seen.insert($0).inserted }
        guard !live.isEmpty else { return [] }
        _ = try append(zoneId, entries: entries, floor: state.newestSavedAt, saves: [], deletes: live)
        return live
    }

    public func record(zoneId: String, named recordName: String) throws -> ZoneRecord {
        _ = try incarnation(zoneId)
        try ZoneRules.checkRecordName(recordName)
        let (entries, _) = try loadEntries(zoneId)
        guard let record = FolderZoneState(entries: entries).records[recordName], !record.deleted else {
            throw ZoneError(.recordNotFound, recordName: recordName)
        }
        return record
    }

    public func fetchChanges(zoneId: String, since: ZoneChangeToken?, limit: Int) throws -> ZoneChangeBatch {
        let incarnation = try incarnation(zoneId)
        try ZoneRules.checkLimit(limit)
        var vector = try since.map { try FolderChangeToken(parsing: $0, incarnation: incarnation) } ?? FolderChangeToken(incarnation: incarnation)
        let (entries, damaged) = try loadEntries(zoneId)
        let state = FolderZoneState(entries: entries)
        let unseen = entries.filter { !vector.contains(writer: $0.writer, seq: $0.seq) }.sorted { $0.order < $1.order }
        var records: [ZoneRecord] = []
        var listed = Set<String>()
        var taken = 0
        for entry in unseen {
            let touched = entry.saves.count + entry.deletes.count
            if taken > 0 && taken + touched > limit { break }
            taken += touched
            vector.insert(writer: entry.writer, seq: entry.seq)
            for name in entry.saves.map(\.recordName) + entry.deletes where listed.insert(name).inserted {
                if let record = state.records[name] { records.append(record) }
            }
        }
        let moreComing = unseen.contains { !vector.contains(writer: $0.writer, seq: $0.seq) }
        return ZoneChangeBatch(records: records, changeToken: vector.token, moreComing: moreComing, damaged: damaged)
    }

    // MARK: Subscription

    public func subscribe(zoneId: String) throws -> AsyncThrowingStream<ZoneChangeNotification, any Error> {
        _ = try incarnation(zoneId)
        let entriesPath = layout.entriesPath(zoneId)
        let interval = pollInterval
        var last = Self.fingerprint(entriesPath)
        let (stream, continuation) = AsyncThrowingStream<ZoneChangeNotification, any Error>.makeStream()
        let task = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                let current = Self.fingerprint(entriesPath)
                if current != last {
                    last = current
                    continuation.yield(ZoneChangeNotification(zoneId: zoneId, changeToken: nil))
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The names and sizes of every entry file, which change when any writer's entry arrives.
    private static func fingerprint(_ entriesPath: String) -> [String: Int64] {
        var result: [String: Int64] = [:]
        for writer in (try? FolderFiles.list(entriesPath)) ?? [] where FolderZoneLayout.isWriterID(writer) {
            let directory = entriesPath + "/" + writer
            for name in (try? FolderFiles.list(directory)) ?? [] where FolderZoneLayout.entrySeq(fileName: name) != nil {
                result[writer + "/" + name] = FolderFiles.stamp(directory + "/" + name)?.size ?? -1
            }
        }
        return result
    }

    // MARK: Entries

    /// Every readable entry of every writer, and a damage report per unreadable one. Entries
    /// are cached by file stamp (a published entry never changes; a replaced file is re-read).
    private func loadEntries(_ zoneId: String) throws -> ([FolderZoneEntry], [ZoneError]) {
        let entriesPath = layout.entriesPath(zoneId)
        var entries: [FolderZoneEntry] = []
        var damaged: [ZoneError] = []
        for writer in try FolderFiles.list(entriesPath).sorted() where FolderZoneLayout.isWriterID(writer) {
            let directory = entriesPath + "/" + writer
            guard FolderFiles.isDirectory(directory) else { continue }
            for name in try FolderFiles.list(directory) {
                guard let seq = FolderZoneLayout.entrySeq(fileName: name) else { continue }
                let path = directory + "/" + name
                guard let stamp = FolderFiles.stamp(path) else { continue }
                let result: Result<FolderZoneEntry, ZoneError>
                if let cached = cache[path], cached.0 == stamp {
                    result = cached.1
                } else {
                    result = Result {
                        do {
                            let bytes = try FolderFiles.read(path, limit: FolderZoneEntry.maximumFileBytes)
                            return try FolderZoneEntry.decode(bytes, writer: writer, seq: seq, path: path)
                        } catch let error as ZoneError where error.code == .damagedRecord {
                            throw error
                        } catch let error as ZoneError {
                            throw ZoneError(.damagedRecord, "\(path): \(error.context)")
                        }
                    }.mapError { $0 as! ZoneError }
                    cache[path] = (stamp, result)
                }
                switch result {
                case .success(let entry): entries.append(entry)
                case .failure(let error): damaged.append(error)
                }
            }
        }
        return (entries, damaged)
    }

    /// Writes this writer's next entry. `floor` is the newest `savedAt` seen (the hybrid clock).
    private func append(_ zoneId: String, entries: [FolderZoneEntry], floor: Int64,
                        saves: [FolderZoneEntry.Save], deletes: [String]) throws -> FolderZoneEntry {
        let directory = layout.entriesPath(zoneId, writer: writer)
        try FolderFiles.makeDirectories(directory)
        var seq = (try FolderFiles.list(directory).compactMap(FolderZoneLayout.entrySeq(fileName:)).max() ?? 0) + 1
        guard seq <= FolderZoneLayout.maximumSeq else { throw ZoneError(.io, "writer \(writer) has used every entry number") }
        let savedAt = max(Int64((now().timeIntervalSince1970 * 1000).rounded(.down)), floor + 1)
        while true {
            let entry = FolderZoneEntry(writer: writer, seq: seq, savedAt: savedAt, saves: saves, deletes: deletes)
            if try FolderFiles.publishNew(try entry.encoded(), at: directory + "/" + FolderZoneLayout.entryFileName(seq)) {
                return entry
            }
            seq += 1 // another instance with this writer id took the number: never replace its file
            guard seq <= FolderZoneLayout.maximumSeq else { throw ZoneError(.io, "writer \(writer) has used every entry number") }
        }
    }
}
