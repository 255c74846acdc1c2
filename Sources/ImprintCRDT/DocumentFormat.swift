/// The full-document binary format (`docs/format.md`, "Document").
///
/// ```
/// magic "IMPD" | version u8 (5 as written, 4 for redacted saves; 1 to 3 still read)
/// | flags u8 (bit 0: zstd, bit 1: XXH64 checksum) | checksum 8 bytes
/// | uleb payload length (uncompressed) | uleb body length | body (zstd frame when flagged)
/// ```
/// The checksum covers everything after it: XXH64 of it (little-endian) when flag bit 1 is
/// set, as `save` writes, else the first 8 bytes of its SHA-256, as builds before the flag
/// wrote (``Checksum``). The payload holds the actor table, change headers, objects, map
/// ops, remove ops and, per sequence, its spans in document order as columns (see the
/// spec); version 2 adds a last section, the mark ops of texts; version 3 stores each text's
/// visible content first; version 5 stores the change headers as runs.
enum DocumentFormat {
    static let magic: [UInt8] = Array("IMPD".utf8)
    /// Documents without mark ops: byte for byte what builds before marks wrote and read.
    static let version: UInt8 = 1
    /// Documents holding mark ops (a mark-op section after the sequences): builds before
    /// marks refuse them with `unsupportedVersion`.
    static let markVersion: UInt8 = 2
    /// What `save` wrote before version 5: the layout of version 1 where each text's content column holds
    /// its visible text first (with its byte length before the columns), so a load can hand
    /// out the text before decoding the history, and a mark-op count that may be 0. Builds
    /// before it refuse it with `unsupportedVersion`.
    static let readableVersion: UInt8 = 3
    /// A redacted save (``HistoryRetention/redacted``): version 3 without the content of
    /// deleted text, and a last section naming the changes that lost content, with their
    /// hashes. Builds before it refuse it with `unsupportedVersion`.
    static let redactedVersion: UInt8 = 4
    /// What `save` writes (without redacted changes): version 3 with the change headers
    /// stored as runs of one actor's consecutive changes (`ChangeRuns`). Builds before it
    /// refuse it with `unsupportedVersion`. Redacted saves keep version 4 (headers per change).
    static let runVersion: UInt8 = 5
    /// How a frame's checksum is computed: flag bit 1 says which.
    enum Checksum {
        /// The first 8 bytes of SHA-256: every build before the flag wrote it, and tests
        /// still write it to reproduce their files byte for byte.
        case sha256
        /// XXH64, little-endian (``XXH64``): what `save` writes. Builds before it refuse
        /// the flag with `unsupportedVersion` ("unknown document flags").
        case xxh64

        static let flag: UInt8 = 2

        func of(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            switch self {
            case .sha256: Array(SHA256Digest.of(Array(bytes)).prefix(8))
            case .xxh64: XXH64.checksum(bytes)
            }
        }
    }

    /// Decoders refuse payloads larger than this (1 GiB).
    static let maxPayload = 1 << 30

    /// Columns inside the payload are compressed one by one, so the frame itself is stored raw.
    static func frame(_ payload: [UInt8], version: UInt8 = version, compress: Bool = false, checksum: Checksum = .xxh64) -> [UInt8] {
        let body = compress ? Zstd.compress(payload) : payload
        var tail = ByteWriter()
        tail.uleb(payload.count)
        tail.uleb(body.count)
        tail.raw(body)
        var out = ByteWriter()
        out.raw(magic)
        out.byte(version)
        out.byte((compress ? 1 : 0) | (checksum == .xxh64 ? Checksum.flag : 0))
        out.raw(checksum.of(tail.bytes[...]))
        out.raw(tail.bytes)
        return out.bytes
    }

    /// The byte length of the document frame at the start of `bytes` (what follows may be
    /// incremental chunks).
    static func extent(_ bytes: [UInt8]) throws -> Int {
        guard bytes.count >= 4, Array(bytes[0..<4]) == magic else {
            throw CRDTError(.notImprintData, "not an Imprint document")
        }
        guard bytes.count >= 14 else { throw CRDTError(.truncated, "document header is incomplete") }
        guard (version...runVersion).contains(bytes[4]) else { throw CRDTError(.unsupportedVersion, "document format version \(bytes[4])") }
        var r = ByteReader(bytes, offset: 14)
        _ = try r.count(max: maxPayload)
        let bodyLength = try r.count(max: r.remaining)
        return r.offset + bodyLength
    }

    /// Checks the header and checksum and returns the uncompressed payload.
    static func unframe(_ bytes: [UInt8]) throws -> [UInt8] {
        let end = try extent(bytes)
        guard end == bytes.count else { throw CRDTError(.malformed, "trailing bytes after document") }
        let flags = bytes[5]
        guard flags & ~(1 | Checksum.flag) == 0 else { throw CRDTError(.unsupportedVersion, "unknown document flags \(flags)") }
        let checksum: Checksum = flags & Checksum.flag != 0 ? .xxh64 : .sha256
        guard checksum.of(bytes[14...]) == Array(bytes[6..<14]) else {
            throw CRDTError(.checksumMismatch, "document checksum does not match")
        }
        var r = ByteReader(bytes, offset: 14)
        let length = try r.count(max: maxPayload)
        _ = try r.count(max: r.remaining)
        let body = bytes[r.offset...]
        if flags & 1 == 1 {
            return try Zstd.decompress(body, expected: length, limit: maxPayload)
        }
        guard body.count == length else { throw CRDTError(.malformed, "payload length mismatch") }
        return Array(body)
    }
}

/// A set of byte columns written one after another. Each column is stored as
/// `uleb rawLength | u8 mode (0 raw, 1 zstd) | uleb storedLength | stored bytes`; a column
/// is compressed on its own when that makes it smaller, since like values compress best together.
struct ColumnSet {
    var columns: [ByteWriter]

    init(count: Int) { columns = Array(repeating: ByteWriter(), count: count) }

    /// Writes every column, releasing each raw column as soon as it is written.
    mutating func write(to w: inout ByteWriter, encoder: Zstd.Encoder) {
        for i in columns.indices {
            ColumnSet.writeColumn(columns[i].bytes, to: &w, encoder: encoder)
            columns[i] = ByteWriter()
        }
    }

    static func writeColumn(_ raw: [UInt8], to w: inout ByteWriter, encoder: Zstd.Encoder) {
        w.uleb(raw.count)
        if raw.count >= 64 {
            let z = encoder.compress(raw)
            if z.count < raw.count {
                w.byte(1)
                w.lengthPrefixed(z)
                return
            }
        }
        w.byte(0)
        w.lengthPrefixed(raw)
    }

    /// Steps over `count` columns without inflating them (their framing is checked; their
    /// content is not read).
    static func skip(_ r: inout ByteReader, count: Int, budget: Int) throws {
        for _ in 0..<count {
            _ = try r.count(max: budget)
            guard try r.byte() <= 1 else { throw CRDTError(.malformed, "unknown column mode") }
            _ = try r.lengthPrefixed()
        }
    }

    /// Reads `count` columns; compressed ones are inflated into their own buffers, and the
    /// total inflated size is bounded by `budget` (shared across a whole document).
    static func read(_ r: inout ByteReader, count: Int, budget: inout Int, decoder: Zstd.Decoder) throws -> [ByteReader] {
        var out: [ByteReader] = []
        for _ in 0..<count {
            let rawLength = try r.count(max: budget)
            let mode = try r.byte()
            let stored = try r.lengthPrefixed()
            switch mode {
            case 0:
                guard stored.count == rawLength else { throw CRDTError(.malformed, "column length mismatch") }
                out.append(ByteReader(r.bytes, offset: stored.startIndex, end: stored.endIndex))
            case 1:
                budget -= rawLength
                let inflated = try decoder.decompress(stored, expected: rawLength, limit: rawLength)
                out.append(ByteReader(inflated))
            default:
                throw CRDTError(.malformed, "unknown column mode \(mode)")
            }
        }
        return out
    }
}
