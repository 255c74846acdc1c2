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

/// A stretch of a change log that did not read as frames, with valid frames after it: damage
/// (a flipped bit, a bad sector, a tool that wrote over the file), not a torn tail.
public struct ChangeLogDamage: Sendable, Equatable {
    /// Byte range of the damaged stretch: from the first invalid frame to the next valid one.
    public var range: Range<Int64>
    /// What was wrong with the frame at `range.lowerBound`.
    public var reason: ChangeLogTail
}

/// Everything a reader recovered from one change log.
public struct ChangeLogContents: Sendable {
    /// Valid change records in file order (the same change may appear twice if a writer
    /// re-appended it; callers union by hash), including those after damaged stretches.
    public var records: [LogRecord]
    /// Bytes from the start of the file to the end of the last valid frame.
    public var validLength: Int64
    public var fileLength: Int64
    /// What follows the last valid frame (nothing valid does).
    public var tail: ChangeLogTail
    /// Frames with a valid checksum and a payload kind this version does not know.
    public var skippedFrames: Int
    /// Damaged stretches with valid frames after them, in file order. A writer never
    /// truncates such a log: it quarantines it (`ChangeLogWriter`).
    public var damage: [ChangeLogDamage] = []

    /// Bytes a reader could not read as frames: damaged stretches and the tail after the last
    /// valid frame.
    public var droppedBytes: Int64 {
        fileLength - validLength + damage.byteCount
    }
}

extension Collection<ChangeLogDamage> {
    /// Bytes in all these damaged stretches.
    public var byteCount: Int64 {
        reduce(0) { $0 + ($1.range.upperBound - $1.range.lowerBound) }
    }
}

/// Reads change logs. Readers never modify the file, take no lock, and tolerate a writer
/// appending concurrently (an in-progress frame reads as a torn tail).
public enum ChangeLogReader {
    /// Reads every valid record of the log at `path`. An invalid frame is skipped by
    /// resynchronising on the next valid frame (`damage`); only what no valid frame follows is
    /// the tail. Throws only for I/O errors, a file that is not a change log, or a too-new
    /// version.
    public static func read(
        at path: String,
        maxPayloadLength: Int = ChangeLogFormat.defaultMaxPayloadLength
    ) throws -> ChangeLogContents {
        let fd = try POSIX.open(path, O_RDONLY | O_NONBLOCK)
        defer { POSIX.close(fd) }
        return try read(fd: fd, path: path, maxPayloadLength: maxPayloadLength)
    }

    static func read(fd: Int32, path: String, maxPayloadLength: Int) throws -> ChangeLogContents {
        let fileLength = try POSIX.fileSize(fd, path: path)
        guard let start = try validateHeader(fd: fd, path: path, fileLength: fileLength) else {
            return ChangeLogContents(records: [], validLength: 0, fileLength: fileLength,
                                     tail: fileLength == 0 ? .clean : .truncatedHeader, skippedFrames: 0)
        }
        var records: [LogRecord] = []
        let scan = try scanFrames(fd: fd, path: path, from: start, fileLength: fileLength,
                                  maxPayloadLength: maxPayloadLength) { records.append($0) }
        return ChangeLogContents(records: records, validLength: scan.validEnd, fileLength: fileLength,
                                 tail: scan.tail, skippedFrames: scan.skipped, damage: scan.damage)
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
        var damage: [ChangeLogDamage] = []
    }

    /// One frame read at an offset.
    enum FrameRead {
        /// A valid frame ending at `end`: a change, or nil for a kind this version skips.
        case valid(LogRecord?, end: Int64)
        case invalid(ChangeLogTail)
    }

    /// Reads the frame at `offset` (which the caller believes is a frame boundary).
    static func frame(fd: Int32, path: String, at offset: Int64, fileLength: Int64, maxPayloadLength: Int) throws -> FrameRead {
        let remaining = fileLength - offset
        if remaining < Int64(ChangeLogFormat.frameHeaderLength) { return .invalid(.truncatedFrame) }
        var frameHeader = [UInt8](repeating: 0, count: ChangeLogFormat.frameHeaderLength)
        let n = try frameHeader.withUnsafeMutableBytes { try POSIX.pread(fd, $0, offset: offset, path: path) }
        if n < ChangeLogFormat.frameHeaderLength { return .invalid(.truncatedFrame) }
        let length = ChangeLogFormat.readLE32(frameHeader, at: 0)
        let storedCRC = ChangeLogFormat.readLE32(frameHeader, at: 4)
        if Int64(length) > Int64(maxPayloadLength) { return .invalid(.payloadTooLarge(length)) }
        if Int64(length) > remaining - Int64(ChangeLogFormat.frameHeaderLength) { return .invalid(.truncatedFrame) }
        var payload = [UInt8](repeating: 0, count: Int(length))
        let got = try payload.withUnsafeMutableBytes {
            try POSIX.pread(fd, $0, offset: offset + Int64(ChangeLogFormat.frameHeaderLength), path: path)
        }
        if got < Int(length) { return .invalid(.truncatedFrame) }
        var crc = CRC32C.checksum(Array(frameHeader[0..<4]))
        crc = CRC32C.checksum(payload, continuing: crc)
        if crc != storedCRC { return .invalid(.checksumMismatch) }
        let end = offset + Int64(ChangeLogFormat.frameHeaderLength) + Int64(length)
        switch ChangeLogFormat.decodePayload(payload) {
        case .change(let record): return .valid(record, end: end)
        case .unknownKind: return .valid(nil, end: end)
        case .malformed: return .invalid(.malformedPayload)
        }
    }

    /// Walks frames from `start` (which must be a frame boundary) to `fileLength`. An invalid
    /// frame is not the end: the walk resynchronises on the next offset where a whole change
    /// frame validates (`resynchronise`) and records the stretch between as damage; only
    /// when no valid frame follows is it the tail.
    static func scanFrames(
        fd: Int32, path: String, from start: Int64, fileLength: Int64, maxPayloadLength: Int,
        visit: (LogRecord) -> Void
    ) throws -> ScanResult {
        var offset = start
        var result = ScanResult(validEnd: start, tail: .clean, skipped: 0)
        var budget = resynchronisationBudget
        while offset < fileLength {
            switch try frame(fd: fd, path: path, at: offset, fileLength: fileLength, maxPayloadLength: maxPayloadLength) {
            case .valid(let record, let end):
                if let record { visit(record) } else { result.skipped += 1 }
                offset = end
                result.validEnd = end
            case .invalid(let reason):
                guard let next = try resynchronise(fd: fd, path: path, after: offset, fileLength: fileLength,
                                                   maxPayloadLength: maxPayloadLength, budget: &budget) else {
                    result.tail = reason
                    return result
                }
                result.damage.append(ChangeLogDamage(range: offset..<next, reason: reason))
                offset = next
            }
        }
        result.tail = .clean
        return result
    }

    /// Bytes of candidate frames one read may checksum while looking for the next valid
    /// frame after damage (256 MiB): bounds the work a hostile file can cause.
    static let resynchronisationBudget: Int64 = 256 << 20

    /// The first offset after `offset` where a whole change frame validates (length within
    /// the file and the limit, change kind, checksum, payload), or nil. Reads the file in
    /// 1 MiB windows; only offsets that pass the cheap checks are checksummed, within
    /// `budget` bytes.
    static func resynchronise(fd: Int32, path: String, after offset: Int64, fileLength: Int64,
                              maxPayloadLength: Int, budget: inout Int64) throws -> Int64? {
        let window = 1 << 20
        let headerLength = Int64(ChangeLogFormat.frameHeaderLength)
        var base = offset + 1
        var buffer = [UInt8](repeating: 0, count: window + Int(headerLength) + 1)
        while base + headerLength + 1 + Int64(RecordHash.byteCount) <= fileLength {
            let n = try buffer.withUnsafeMutableBytes { try POSIX.pread(fd, $0, offset: base, path: path) }
            guard n > Int(headerLength) else { return nil }
            let candidates = min(window, n - Int(headerLength))
            for i in 0..<candidates where buffer[i + Int(headerLength)] == ChangeLogFormat.PayloadKind.change.rawValue {
                let length = Int64(ChangeLogFormat.readLE32(buffer, at: i))
                let candidate = base + Int64(i)
                guard length >= 1 + Int64(RecordHash.byteCount), length <= Int64(maxPayloadLength),
                      candidate + headerLength + length <= fileLength else { continue }
                budget -= length
                if budget < 0 { return nil }
                if case .valid = try frame(fd: fd, path: path, at: candidate, fileLength: fileLength, maxPayloadLength: maxPayloadLength) {
                    return candidate
                }
            }
            base += Int64(candidates)
        }
        return nil
    }
}
