/// A batch of changes in one compact, compressed, self-checking byte string: what a replica
/// sends over a network (the sync layer encrypts it; this type knows nothing of that).
///
/// Layout (docs/format.md): `"IMPZ"`, version `1`, the uncompressed length (ULEB128), then
/// one zstd frame holding the change chunk `saveIncremental()` writes (count, then each
/// change length-prefixed, under an 8-byte SHA-256 checksum). Decoding is bounded: the
/// declared length is checked against `maximumBytes` before anything is allocated, and every
/// change is decoded by the same checked decoder as files are.
///
/// ```swift
/// let wire = ChangeSet.encode(doc.changes(since: lastSent))
/// try other.apply(try ChangeSet.decode(wire))
/// ```
public enum ChangeSet {
    static let magic: [UInt8] = Array("IMPZ".utf8)
    /// The default bound on a decoded change set (256 MiB).
    public static let defaultMaximumBytes = 256 << 20

    /// `changes` as one compressed byte string (dependencies before dependents, as given).
    public static func encode(_ changes: [Change], level: Int32 = 3) -> [UInt8] {
        let plain = IncrementalFormat.encode(changes.map(\.bytes))
        var w = ByteWriter()
        w.raw(magic)
        w.byte(1)
        w.uleb(plain.count)
        w.raw(Zstd.compress(plain, level: level))
        return w.bytes
    }

    /// The changes of a byte string written by ``encode(_:level:)``. Hostile or damaged bytes
    /// throw ``CRDTError`` (`.notImprintData`, `.unsupportedVersion`, `.tooLarge`,
    /// `.compression`, `.checksumMismatch`, `.malformed`); a decoded size over `maximumBytes`
    /// is refused before it is allocated.
    public static func decode(_ bytes: [UInt8], maximumBytes: Int = defaultMaximumBytes) throws -> [Change] {
        guard bytes.count >= 6, Array(bytes[0..<4]) == magic else { throw CRDTError(.notImprintData, "not a change set") }
        guard bytes[4] == 1 else { throw CRDTError(.unsupportedVersion, "change set version \(bytes[4])") }
        var r = ByteReader(bytes, offset: 5)
        let length = try r.count(max: maximumBytes)
        let plain = try Zstd.decompress(bytes[r.offset...], expected: length, limit: maximumBytes)
        return try IncrementalFormat.decode(plain)
    }
}
