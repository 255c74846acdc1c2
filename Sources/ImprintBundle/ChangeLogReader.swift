#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ImprintFiles

/// How a change log ends after its last valid frame.
public enum ChangeLogTail: Sendable, Equatable {
    /// The file ends exactly after the last valid frame.
    case clean
    /// The file is shorter than a header but is a prefix of one (a crash while creating it).
    case truncatedHeader
    /// The last frame's header or payload runs past the end of the file (a torn append).
    case truncatedFrame
    /// A frame whose checksum does not match its bytes.
    case checksumMismatch
    /// A frame length above the reader's limit; nothing was allocated for it.
    case payloadTooLarge(UInt32)
    /// A frame with a valid checksum but a payload that does not decode.
    case malformedPayload
}

/// Everything a reader recovered from one change log.
public struct ChangeLogContents: Sendable {
    /// Valid change records in file order (the same change may appear twice if a writer
    /// re-appended it; callers union by hash).
    public var records: [ChangeRecord]
    /// Bytes from the start of the file to the end of the last valid frame.
    public var validLength: Int64
    public var fileLength: Int64
    public var tail: ChangeLogTail
    /// Frames with a valid checksum and a payload kind this version does not know.
    public var skippedFrames: Int

    /// Bytes after the last valid frame that a reader ignored (and a writer will truncate).
    public var droppedBytes: Int64 { fileLength - validLength }
}

/// Reads change logs. Readers never modify the file, take no lock, and tolerate a writer
/// appending concurrently (an in-progress frame reads as a torn tail).
public enum ChangeLogReader {
    /// Reads every valid record of the log at `path`, stopping cleanly at the first invalid
    /// byte. Throws only for I/O errors, a file that is not a change log, or a too-new version.
    public static func read(
        at path: String,
        maxPayloadLength: Int = ChangeLogFormat.defaultMaxPayloadLength
    ) throws -> ChangeLogContents {
        let fd = try POSIX.open(path, O_RDONLY)
        defer { POSIX.close(fd) }
        return try read(fd: fd, path: path, maxPayloadLength: maxPayloadLength)
    }

    static func read(fd: Int32, path: String, maxPayloadLength: Int) throws -> ChangeLogContents {
        let fileLength = try POSIX.fileSize(fd, path: path)
        guard let start = try validateHeader(fd: fd, path: path, fileLength: fileLength) else {
            return ChangeLogContents(records: [], validLength: 0, fileLength: fileLength,
                                     tail: fileLength == 0 ? .clean : .truncatedHeader, skippedFrames: 0)
        }
        var records: [ChangeRecord] = []
        let scan = try scanFrames(fd: fd, path: path, from: start, fileLength: fileLength,
                                  maxPayloadLength: maxPayloadLength) { records.append($0) }
        return ChangeLogContents(records: records, validLength: scan.validEnd, fileLength: fileLength,
                                 tail: scan.tail, skippedFrames: scan.skipped)
    }

    /// Returns the offset of the first frame, or nil when the file is empty or holds only a
    /// prefix of a header. Throws for anything else that is not a valid header.
    static func validateHeader(fd: Int32, path: String, fileLength: Int64) throws -> Int64? {
        let headerLength = ChangeLogFormat.headerLength
        var header = [UInt8](repeating: 0, count: Int(min(fileLength, Int64(headerLength))))
        let n = try header.withUnsafeMutableBytes { try POSIX.pread(fd, $0, offset: 0, path: path) }
        header.removeLast(header.count - n)
        if header.count < headerLength {
            if ChangeLogFormat.isHeaderPrefix(header) { return nil }
            throw BundleError(.corrupt, "not an Imprint change log (\(header.count)-byte file)", path: path)
        }
        try ChangeLogFormat.checkHeader(header, path: path)
        return Int64(headerLength)
    }

    struct ScanResult {
        var validEnd: Int64
        var tail: ChangeLogTail
        var skipped: Int
    }

    /// Walks frames from `start` (which must be a frame boundary) to `fileLength`.
    static func scanFrames(
        fd: Int32, path: String, from start: Int64, fileLength: Int64, maxPayloadLength: Int,
        visit: (ChangeRecord) -> Void
    ) throws -> ScanResult {
        var offset = start
        var skipped = 0
        var frameHeader = [UInt8](repeating: 0, count: ChangeLogFormat.frameHeaderLength)
        while offset < fileLength {
            let remaining = fileLength - offset
            if remaining < Int64(ChangeLogFormat.frameHeaderLength) {
                return ScanResult(validEnd: offset, tail: .truncatedFrame, skipped: skipped)
            }
            let n = try frameHeader.withUnsafeMutableBytes { try POSIX.pread(fd, $0, offset: offset, path: path) }
            if n < ChangeLogFormat.frameHeaderLength {
                return ScanResult(validEnd: offset, tail: .truncatedFrame, skipped: skipped)
            }
            let length = ChangeLogFormat.readLE32(frameHeader, at: 0)
            let storedCRC = ChangeLogFormat.readLE32(frameHeader, at: 4)
            if Int64(length) > Int64(maxPayloadLength) {
                return ScanResult(validEnd: offset, tail: .payloadTooLarge(length), skipped: skipped)
            }
            if Int64(length) > remaining - Int64(ChangeLogFormat.frameHeaderLength) {
                return ScanResult(validEnd: offset, tail: .truncatedFrame, skipped: skipped)
            }
            var payload = [UInt8](repeating: 0, count: Int(length))
            let got = try payload.withUnsafeMutableBytes {
                try POSIX.pread(fd, $0, offset: offset + Int64(ChangeLogFormat.frameHeaderLength), path: path)
            }
            if got < Int(length) {
                return ScanResult(validEnd: offset, tail: .truncatedFrame, skipped: skipped)
            }
            var crc = CRC32C.checksum(Array(frameHeader[0..<4]))
            crc = CRC32C.checksum(payload, continuing: crc)
            if crc != storedCRC {
                return ScanResult(validEnd: offset, tail: .checksumMismatch, skipped: skipped)
            }
            switch ChangeLogFormat.decodePayload(payload) {
            case .change(let record): visit(record)
            case .unknownKind: skipped += 1
            case .malformed:
                return ScanResult(validEnd: offset, tail: .malformedPayload, skipped: skipped)
            }
            offset += Int64(ChangeLogFormat.frameHeaderLength) + Int64(length)
        }
        return ScanResult(validEnd: offset, tail: .clean, skipped: skipped)
    }
}
