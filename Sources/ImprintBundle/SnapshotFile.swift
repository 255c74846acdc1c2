import ImprintFiles

/// A device's compacted snapshot: the engine's full-history snapshot bytes plus the list
/// of change hashes it contains (so compaction can be checked without the engine).
///
/// ```
/// "IMPRSNAP" | version u16 LE | reserved u16 LE (0) | count u32 LE | count x 32-byte hash
///            | length u64 LE | snapshot bytes | crc32c(all preceding bytes) u32 LE
/// ```
/// Written whole through `AtomicFile`; any mismatch on read is `.corrupt`.
public struct SnapshotFile: Sendable, Equatable {
    public static let magic: [UInt8] = Array("IMPRSNAP".utf8)
    public static let version: UInt16 = 1
    /// Default read limit: 2 GiB.
    public static let defaultMaxLength: Int = 2 << 30

    /// Hashes of every change folded into `snapshot`.
    public var coveredChanges: [RecordHash]
    /// The engine's opaque snapshot.
    public var snapshot: [UInt8]

    public init(coveredChanges: [RecordHash], snapshot: [UInt8]) {
        self.coveredChanges = coveredChanges
        self.snapshot = snapshot
    }

    public func encoded() -> [UInt8] {
        var out = Self.magic
        ChangeLogFormat.appendLE(Self.version, to: &out)
        ChangeLogFormat.appendLE(UInt16(0), to: &out)
        ChangeLogFormat.appendLE(UInt32(coveredChanges.count), to: &out)
        out.reserveCapacity(out.count + coveredChanges.count * 32 + 12 + snapshot.count)
        for hash in coveredChanges { out.append(contentsOf: hash.bytes) }
        ChangeLogFormat.appendLE(UInt64(snapshot.count), to: &out)
        out.append(contentsOf: snapshot)
        ChangeLogFormat.appendLE(CRC32C.checksum(out), to: &out)
        return out
    }

    public init(decoding bytes: [UInt8], path: String? = nil) throws {
        func corrupt(_ why: String) -> BundleError { BundleError(.corrupt, "snapshot: \(why)", path: path) }
        let fixed = 8 + 2 + 2 + 4
        guard bytes.count >= fixed + 8 + 4, Array(bytes[0..<8]) == Self.magic else { throw corrupt("bad magic or too short") }
        let storedCRC = ChangeLogFormat.readLE32(bytes, at: bytes.count - 4)
        guard storedCRC == bytes.withUnsafeBytes({ CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(bytes.count - 4)])) }) else {
            throw corrupt("checksum mismatch")
        }
        let fileVersion = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        guard fileVersion <= Self.version else {
            throw BundleError(.unsupportedVersion, "snapshot version \(fileVersion) is newer than \(Self.version)", path: path)
        }
        let count = Int(ChangeLogFormat.readLE32(bytes, at: 12))
        let body = bytes.count - 4
        guard count <= (body - fixed - 8) / 32 else { throw corrupt("hash count \(count) exceeds the file") }
        var offset = fixed
        var hashes: [RecordHash] = []
        hashes.reserveCapacity(count)
        for _ in 0..<count {
            hashes.append(try RecordHash(bytes: Array(bytes[offset..<(offset + 32)])))
            offset += 32
        }
        let length = ChangeLogFormat.readLE64(bytes, at: offset)
        offset += 8
        guard length == UInt64(body - offset) else { throw corrupt("snapshot length \(length) does not match the file") }
        self.coveredChanges = hashes
        self.snapshot = Array(bytes[offset..<body])
    }

    public static func read(at path: String, maxLength: Int = defaultMaxLength) throws -> SnapshotFile {
        try SnapshotFile(decoding: BundleError.convertingFileErrors { try AtomicFile.read(path, limit: maxLength) }, path: path)
    }

    public func write(to path: String) throws {
        try AtomicFile.write(encoded(), to: path)
    }
}
