/// The byte layout of a change log file (see docs/bundle-format.md, "Change logs").
///
/// ```
/// header (16 bytes): "IMPRLOG\0" | version u16 LE | reserved u16 LE (0) | crc32c(first 12 bytes) u32 LE
/// frame:             length u32 LE | crc32c(length bytes ++ payload) u32 LE | payload (length bytes)
/// payload:           kind u8 | kind-specific body
///   kind 1 (change): hash (32 bytes) | change bytes (rest)
/// ```
/// Unknown payload kinds are skipped by readers so newer writers stay readable.
public enum ChangeLogFormat {
    public static let magic: [UInt8] = Array("IMPRLOG".utf8) + [0]
    public static let version: UInt16 = 1
    public static let headerLength = 16
    public static let frameHeaderLength = 8
    /// Largest frame payload written or accepted by default (64 MiB). A length above the
    /// reader's limit is treated as corruption, so a hostile length never allocates.
    public static let defaultMaxPayloadLength = 64 << 20

    public enum PayloadKind: UInt8, Sendable {
        case change = 1
    }

    public static func header() -> [UInt8] {
        var bytes = magic
        appendLE(UInt16(version), to: &bytes)
        appendLE(UInt16(0), to: &bytes)
        appendLE(CRC32C.checksum(bytes), to: &bytes)
        return bytes
    }

    /// Validates a complete 16-byte header.
    static func checkHeader(_ bytes: [UInt8], path: String) throws {
        guard bytes.count == headerLength, Array(bytes[0..<8]) == magic else {
            throw BundleError(.corrupt, "not an Imprint change log (bad magic)", path: path)
        }
        let crc = readLE32(bytes, at: 12)
        guard crc == CRC32C.checksum(Array(bytes[0..<12])) else {
            throw BundleError(.corrupt, "change log header checksum mismatch", path: path)
        }
        let fileVersion = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        guard fileVersion <= version else {
            throw BundleError(.unsupportedVersion, "change log version \(fileVersion) is newer than \(version)", path: path)
        }
    }

    /// True when `bytes` (shorter than a header) could be the start of a header: what a crash
    /// while creating the log leaves behind.
    static func isHeaderPrefix(_ bytes: [UInt8]) -> Bool {
        let full = header()
        return bytes.count < headerLength && Array(full[0..<bytes.count]) == bytes
    }

    public static func changePayload(_ record: LogRecord) -> [UInt8] {
        var payload = [UInt8]()
        payload.reserveCapacity(1 + RecordHash.byteCount + record.bytes.count)
        payload.append(PayloadKind.change.rawValue)
        payload.append(contentsOf: record.hash.bytes)
        payload.append(contentsOf: record.bytes)
        return payload
    }

    /// Frames one payload: length, checksum, payload.
    public static func frame(_ payload: [UInt8]) -> [UInt8] {
        var lengthBytes = [UInt8]()
        appendLE(UInt32(payload.count), to: &lengthBytes)
        var crc = CRC32C.checksum(lengthBytes)
        crc = CRC32C.checksum(payload, continuing: crc)
        var out = lengthBytes
        out.reserveCapacity(frameHeaderLength + payload.count)
        appendLE(crc, to: &out)
        out.append(contentsOf: payload)
        return out
    }

    /// Decodes a payload that passed its checksum. Returns nil for kinds this version skips;
    /// throws for a change payload too short to hold a hash.
    static func decodePayload(_ payload: [UInt8]) -> PayloadDecoding {
        guard let first = payload.first else { return .malformed }
        guard let kind = PayloadKind(rawValue: first) else { return .unknownKind(first) }
        switch kind {
        case .change:
            guard payload.count >= 1 + RecordHash.byteCount else { return .malformed }
            let hash = try! RecordHash(bytes: Array(payload[1..<(1 + RecordHash.byteCount)]))
            return .change(LogRecord(hash: hash, bytes: Array(payload[(1 + RecordHash.byteCount)...])))
        }
    }

    enum PayloadDecoding {
        case change(LogRecord)
        case unknownKind(UInt8)
        case malformed
    }

    static func appendLE(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(value & 0xFF))
        bytes.append(UInt8(value >> 8))
    }

    static func appendLE(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }

    static func appendLE(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8((value >> UInt64(shift)) & 0xFF)) }
    }

    static func readLE32<C: RandomAccessCollection>(_ bytes: C, at offset: Int) -> UInt32 where C.Element == UInt8, C.Index == Int {
        let base = bytes.startIndex + offset
        return UInt32(bytes[base]) | UInt32(bytes[base + 1]) << 8 | UInt32(bytes[base + 2]) << 16 | UInt32(bytes[base + 3]) << 24
    }

    static func readLE64<C: RandomAccessCollection>(_ bytes: C, at offset: Int) -> UInt64 where C.Element == UInt8, C.Index == Int {
        UInt64(readLE32(bytes, at: offset)) | UInt64(readLE32(bytes, at: offset + 4)) << 32
    }
}
