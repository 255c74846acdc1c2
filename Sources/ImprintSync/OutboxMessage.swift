import Foundation
import ImprintFiles

/// A message encrypted and on disk, not yet acknowledged by the Delivery Service and the zone:
/// one file `<home>/sync/outbox/<convoId>-<clientMessageId>.msg`, written atomically after
/// the ratchet that encrypted it was committed to the key store, removed once its records are
/// in the zone. The file holds everything a restart needs to finish the delivery, so writing
/// it is the only step between encrypting and `sendMessage`.
///
/// Layout: a 4-byte big-endian length, that many bytes of JSON (the fields below), then the
/// ciphertext (an MLSMessage).
struct OutboxMessage: Codable, Sendable, Hashable {
    /// The idempotency key given to `sendMessage` (a retry gets the first call's seq).
    var clientMessageId: String
    var convoId: String
    /// The epoch it was encrypted in.
    var epoch: UInt64
    /// SHA-256 hex of the ciphertext (the DS message's `hash` and the records' `payloadHash`).
    var hash: String
    /// The heads `sharedHeads` takes in once it is delivered.
    var heads: [String]
    /// The ciphertext (not part of the JSON header).
    var ciphertext: [UInt8] = []

    private enum CodingKeys: String, CodingKey { case clientMessageId, convoId, epoch, hash, heads }

    static func directory(home: String) -> String { home + "/sync/outbox" }

    func path(home: String) -> String { Self.directory(home: home) + "/\(convoId)-\(clientMessageId).msg" }

    /// Writes the file atomically (temp, fsync, rename, directory fsync).
    func write(home: String) throws {
        let header = Array(try JSONEncoder.sync.encode(self))
        var bytes = withUnsafeBytes(of: UInt32(header.count).bigEndian) { Array($0) }
        bytes += header
        bytes += ciphertext
        try FileManager.default.createDirectory(atPath: Self.directory(home: home), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try AtomicFile.write(bytes, to: path(home: home), mode: 0o600)
    }

    func remove(home: String) {
        try? FileManager.default.removeItem(atPath: path(home: home))
    }

    /// The messages of `convoId` waiting in `home`'s outbox, oldest first (by name: ids are
    /// random, so by the time each file was written). A damaged file is an error naming it.
    static func pending(home: String, convoId: String, limit: Int) throws(SyncError) -> [OutboxMessage] {
        let directory = directory(home: home)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var found: [(Date, OutboxMessage)] = []
        for name in names where name.hasPrefix(convoId + "-") && name.hasSuffix(".msg") {
            let path = directory + "/" + name
            do {
                let bytes = try AtomicFile.read(path, limit: limit)
                guard bytes.count >= 4 else { throw SyncError(.io, "\(path) is truncated") }
                let length = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
                guard length <= bytes.count - 4 else { throw SyncError(.io, "\(path) is truncated") }
                var message = try JSONDecoder.sync.decode(OutboxMessage.self, from: Data(bytes[4..<(4 + length)]))
                message.ciphertext = Array(bytes[(4 + length)...])
                let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date ?? .distantPast
                found.append((modified, message))
            } catch let error as SyncError {
                throw error
            } catch {
                throw SyncError(.io, "the outbox file \(path) is unreadable: \(error)")
            }
        }
        return found.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
