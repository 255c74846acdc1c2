/// One message of the sync protocol, as it travels (`docs/sync-protocol.md`).
///
/// Layout: type byte `0x42`; heads; need; have list; changes. Hash lists are a uleb count
/// followed by 32-byte hashes; each have is its last-sync hash list then a length-prefixed
/// Bloom filter; each change is length-prefixed canonical change bytes.
struct SyncMessage: Sendable, Equatable {
    static let messageType: UInt8 = 0x42
    /// Most changes one message may carry when decoding.
    static let maxChanges = 1 << 20

    /// A summary of what the sender has: every change since `lastSync`, in a Bloom filter.
    struct Have: Sendable, Equatable {
        var lastSync: [ChangeHash]
        var bloom: BloomFilter
    }

    /// The sender's current heads.
    var heads: [ChangeHash]
    /// Changes the sender knows it lacks (dependencies of changes it holds back).
    var need: [ChangeHash]
    var have: [Have]
    var changes: [Change]

    func encode() -> [UInt8] {
        var w = ByteWriter()
        w.byte(SyncMessage.messageType)
        SyncMessage.writeHashes(heads, &w)
        SyncMessage.writeHashes(need, &w)
        w.uleb(have.count)
        for h in have {
            SyncMessage.writeHashes(h.lastSync, &w)
            var b = ByteWriter()
            h.bloom.encode(into: &b)
            w.lengthPrefixed(b.bytes)
        }
        w.uleb(changes.count)
        for c in changes { w.lengthPrefixed(c.bytes) }
        return w.bytes
    }

    /// Decodes untrusted bytes; anything malformed throws ``CRDTError``.
    init(decoding bytes: [UInt8]) throws {
        var r = ByteReader(bytes)
        let t = try r.byte()
        guard t == SyncMessage.messageType else {
            throw CRDTError(.unsupportedVersion, "sync message type \(t), expected \(SyncMessage.messageType)")
        }
        heads = try SyncMessage.readHashes(&r)
        need = try SyncMessage.readHashes(&r)
        let nh = try r.count(max: r.remaining)
        var have: [Have] = []
        for _ in 0..<nh {
            let last = try SyncMessage.readHashes(&r)
            let b = try r.lengthPrefixed()
            var br = ByteReader(bytes, offset: b.startIndex, end: b.endIndex)
            let bloom = try BloomFilter(decoding: &br)
            guard br.isAtEnd else { throw CRDTError(.malformed, "trailing bytes in Bloom filter") }
            have.append(Have(lastSync: last, bloom: bloom))
        }
        self.have = have
        let nc = try r.count(max: min(r.remaining, SyncMessage.maxChanges))
        var changes: [Change] = []
        for _ in 0..<nc { changes.append(try Change(bytes: Array(try r.lengthPrefixed()))) }
        self.changes = changes
        guard r.isAtEnd else { throw CRDTError(.malformed, "trailing bytes after sync message") }
    }

    init(heads: [ChangeHash], need: [ChangeHash], have: [Have], changes: [Change]) {
        self.heads = heads
        self.need = need
        self.have = have
        self.changes = changes
    }

    static func writeHashes(_ hs: [ChangeHash], _ w: inout ByteWriter) {
        w.uleb(hs.count)
        for h in hs { w.raw(h.bytes) }
    }

    static func readHashes(_ r: inout ByteReader) throws -> [ChangeHash] {
        let n = try r.count(max: r.remaining / 32)
        var out: [ChangeHash] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(ChangeHash(unchecked: Array(try r.bytes(32)))) }
        return out
    }
}
