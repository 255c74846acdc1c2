import ImprintEncoding
import ImprintMLS

/// The body of an `assets` payload: assets a member shared with the group, each with where its
/// records are and the key that opens them (``AttachmentCipher``). Travels as an MLS
/// application message like a change set, so only members read the keys; a member who joins
/// later gets every key known so far right after the snapshot.
///
/// Layout (TLS presentation language): a vector of entries, each `opaque asset<V>` (32 bytes,
/// the SHA-256 of the plaintext), `uint64 size`, `opaque key<V>` (32 bytes), `opaque
/// record_base<V>` (`att-` and 32 lowercase hex digits; segment `i` is record `<base>.<i>`).
struct AttachmentAnnouncement: Sendable, Hashable {
    struct Entry: Sendable, Hashable {
        var asset: [UInt8]
        var size: UInt64
        var key: [UInt8]
        var recordBase: String
    }

    var entries: [Entry]

    init(_ entries: [Entry]) { self.entries = entries }

    var encoded: [UInt8] {
        var w = TLSWriter(capacity: entries.count * 128)
        w.writeVector(entries) { w, entry in
            w.writeOpaque(entry.asset)
            w.writeUInt64(entry.size)
            w.writeOpaque(entry.key)
            w.writeOpaque(Array(entry.recordBase.utf8))
        }
        return w.bytes
    }

    /// Decodes and checks every entry. Throws ``SyncError/Code/invalidPayload`` for anything
    /// else (wrong lengths, a record base that is not `att-` and 32 hex digits, trailing bytes).
    init(decoding bytes: [UInt8]) throws(SyncError) {
        do {
            var r = TLSReader(bytes)
            entries = try r.readVector { r in
                let asset = try r.readOpaque(), size = try r.readUInt64(), key = try r.readOpaque()
                guard asset.count == 32, key.count == 32, size <= UInt64(Int64.max),
                      let base = String(validating: try r.readOpaque(), as: UTF8.self), Self.isRecordBase(base) else {
                    throw SyncError(.invalidPayload, "an asset announcement entry is malformed")
                }
                return Entry(asset: asset, size: size, key: key, recordBase: base)
            }
            try r.finish()
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.invalidPayload, "malformed asset announcement: \(error)")
        }
    }

    /// A fresh record base: `att-` and 16 random bytes in hex (nothing of the asset's content
    /// or id, so the zone cannot tell which file a record holds).
    static func newRecordBase() -> String {
        var random = SystemRandomNumberGenerator()
        return "att-" + Hex.encode(random.nextBytes(16))
    }

    static func isRecordBase(_ text: String) -> Bool {
        text.utf8.count == 36 && text.hasPrefix("att-") && text.utf8.dropFirst(4).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
