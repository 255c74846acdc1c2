#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ImprintFiles

/// Appends change records to one device's log.
///
/// Every append takes the log's `FileLock`, so two processes (or two writers in one
/// process) never interleave frames. Under the lock the writer re-checks the file: it
/// notices frames other writers appended, drops a torn tail left by a crashed writer
/// (truncating it), writes the new frames after the last valid one, and fsyncs before
/// returning. When `append` returns, the records survive a crash or power loss.
///
/// A tail is torn only when no valid frame follows it. A log with a damaged stretch and valid
/// frames after it is never truncated: the writer first moves it aside whole under a
/// quarantine name (`<device>.log.quarantined-<UTC time>-<random>`, which no reader merges and
/// no tidying deletes: `BundleLayout.isQuarantineName`), then writes a fresh log at the
/// canonical path holding every intact record, then appends. Nothing that was readable is
/// lost, and the damaged bytes stay for inspection.
public final class ChangeLogWriter: @unchecked Sendable {
    public let path: String
    public let lock: FileLock
    public let maxPayloadLength: Int
    /// Upper bound on the bytes passed to one write(2) call (default: unbounded). The crash
    /// test lowers it so that a SIGKILL can land between the pieces of one frame, which is
    /// what a power cut does to a large write.
    public let maxBytesPerWrite: Int

    private let mutex = NSLock()
    private var fd: Int32 = -1
    private var openedInode: (dev: UInt64, ino: UInt64) = (0, 0)
    /// End of the last valid frame as this writer last saw it (0 = unknown).
    private var knownEnd: Int64 = 0

    /// Opens (creating if needed) the log at `path`, guarded by `lock`. The containing
    /// directory must exist. `maxPayloadLength` can only lower the format's 64 MiB frame limit.
    public init(path: String, lock: FileLock,
                maxPayloadLength: Int = ChangeLogFormat.defaultMaxPayloadLength,
                maxBytesPerWrite: Int = Int.max) throws {
        self.path = path
        self.maxBytesPerWrite = max(1, maxBytesPerWrite)
        self.lock = lock
        // Never write a frame that a reader with the default limit would refuse.
        self.maxPayloadLength = min(maxPayloadLength, ChangeLogFormat.defaultMaxPayloadLength)
        try lock.withLock { try reopenIfReplaced() }
    }

    deinit {
        if fd >= 0 { POSIX.close(fd) }
    }

    /// What an append did, for logging and tests.
    public struct AppendResult: Sendable, Equatable {
        /// Offset of the first new frame.
        public var offset: Int64
        /// Bytes written (frames only).
        public var bytesWritten: Int64
        /// Bytes of a torn tail that were truncated before writing.
        public var truncatedBytes: Int64
        /// Where a damaged log was moved aside before this append, if it was.
        public var quarantined: String? = nil
    }

    /// Appends one record durably.
    @discardableResult
    public func append(_ record: LogRecord) throws -> AppendResult {
        try append(contentsOf: [record])
    }

    /// Appends records as one write and one fsync. Either all of them survive a crash or a
    /// prefix of them does (whole frames only); a frame is never half-visible to readers
    /// after recovery.
    @discardableResult
    public func append(contentsOf records: [LogRecord]) throws -> AppendResult {
        var bytes = [UInt8]()
        for record in records {
            let payload = ChangeLogFormat.changePayload(record)
            guard payload.count <= maxPayloadLength else {
                throw BundleError(.tooLarge, "change of \(record.bytes.count) bytes exceeds the frame limit of \(maxPayloadLength)", path: path)
            }
            bytes.append(contentsOf: ChangeLogFormat.frame(payload))
        }
        mutex.lock()
        defer { mutex.unlock() }
        return try lock.withLock {
            try reopenIfReplaced()
            var quarantined: String?
            let end: Int64, truncated: Int64
            if let recovered = try recoverValidEnd() {
                (end, truncated) = recovered
            } else {
                // Damage with valid frames after it: move the file aside, keep every intact record.
                let contents = try ChangeLogReader.read(fd: fd, path: path, maxPayloadLength: maxPayloadLength)
                quarantined = try quarantine()
                try writeFresh(contents.records)
                (end, truncated) = (knownEnd, 0)
            }
            if !bytes.isEmpty {
                try bytes.withUnsafeBytes { buffer in
                    var written = 0
                    while written < buffer.count {
                        let n = pwrite(fd, buffer.baseAddress! + written, min(buffer.count - written, maxBytesPerWrite),
                                       off_t(end) + off_t(written))
                        if n < 0 {
                            if errno == EINTR { continue }
                            throw POSIX.ioError("write", path: path)
                        }
                        written += n
                    }
                }
            }
            try POSIX.fsync(fd, path: path)
            knownEnd = end + Int64(bytes.count)
            return AppendResult(offset: end, bytesWritten: Int64(bytes.count), truncatedBytes: truncated, quarantined: quarantined)
        }
    }

    /// Rewrites the log keeping only records for which `keep` returns true (compaction of
    /// this device's own log after a snapshot made its other records redundant). The new log
    /// replaces the old one atomically; a log with damaged stretches is quarantined first
    /// (see the type's notes), never silently dropped. Returns the number of records removed.
    @discardableResult
    public func rewrite(keeping keep: (LogRecord) -> Bool) throws -> Int {
        mutex.lock()
        defer { mutex.unlock() }
        return try lock.withLock {
            try reopenIfReplaced()
            let contents = try ChangeLogReader.read(fd: fd, path: path, maxPayloadLength: maxPayloadLength)
            if !contents.damage.isEmpty {
                _ = try quarantine()
            }
            let kept = contents.records.filter(keep)
            try writeFresh(kept)
            return contents.records.count - kept.count
        }
    }

    /// Keeps the current file, whole, under a quarantine name (a hard link, or a copy where
    /// links are not supported; the directory is fsync'd). Returns that path. Under the lock.
    private func quarantine() throws -> String {
        let directory = POSIX.parentDirectory(of: path)
        let target = path + BundleLayout.quarantineMarker + BundleLayout.quarantineStamp()
        if link(path, target) != 0 {
            let bytes = try AtomicFile.read(path, limit: Int.max)
            try AtomicFile.write(bytes, to: target)
        }
        try POSIX.fsyncDirectory(directory)
        return target
    }

    /// Replaces the log with a header and `records`, atomically. Under the lock.
    private func writeFresh(_ records: [LogRecord]) throws {
        var out = ChangeLogFormat.header()
        for record in records {
            out.append(contentsOf: ChangeLogFormat.frame(ChangeLogFormat.changePayload(record)))
        }
        try AtomicFile.write(out, to: path)
        try reopenIfReplaced()
        knownEnd = Int64(out.count)
    }

    /// Reads the log through this writer's descriptor.
    public func readAll() throws -> ChangeLogContents {
        mutex.lock()
        defer { mutex.unlock() }
        return try ChangeLogReader.read(fd: fd, path: path, maxPayloadLength: maxPayloadLength)
    }

    // MARK: Under the lock

    /// (Re)opens `path` if this writer has no descriptor or the file was replaced by a rename
    /// (compaction by another process). Creates the file when missing.
    private func reopenIfReplaced() throws {
        var st = stat()
        let exists = lstat(path, &st) == 0
        if exists, (st.st_mode & S_IFMT) != S_IFREG {
            throw BundleError(.corrupt, "\(POSIX.fileTypeName(path)) where this device's change log belongs", path: path)
        }
        if fd >= 0, exists, UInt64(st.st_dev) == openedInode.dev, UInt64(st.st_ino) == openedInode.ino {
            return
        }
        if fd >= 0 {
            POSIX.close(fd)
            fd = -1
        }
        let newFD = try POSIX.open(path, O_RDWR | O_CREAT, mode: 0o644)
        var fst = stat()
        guard fstat(newFD, &fst) == 0 else {
            let error = POSIX.ioError("fstat", path: path)
            POSIX.close(newFD)
            throw error
        }
        fd = newFD
        openedInode = (UInt64(fst.st_dev), UInt64(fst.st_ino))
        knownEnd = 0
        if !exists {
            try POSIX.fsyncDirectory(POSIX.parentDirectory(of: path))
        }
    }

    /// Finds the end of the last valid frame, writing a header into an empty or header-torn
    /// file and truncating a torn tail. Returns (end, bytes truncated), or nil when the file
    /// has damage with valid frames after it (the caller quarantines it; nothing is truncated).
    private func recoverValidEnd() throws -> (Int64, Int64)? {
        let size = try POSIX.fileSize(fd, path: path)
        if knownEnd > 0, knownEnd == size { return (size, 0) }
        guard let firstFrame = try ChangeLogReader.validateHeader(fd: fd, path: path, fileLength: size) else {
            // Empty or a torn header: start the file over.
            try POSIX.truncate(fd, to: 0, path: path)
            let header = ChangeLogFormat.header()
            try header.withUnsafeBytes { buffer in
                let n = pwrite(fd, buffer.baseAddress!, buffer.count, 0)
                if n != buffer.count { throw POSIX.ioError("write header", path: path) }
            }
            try POSIX.fsync(fd, path: path)
            return (Int64(header.count), size)
        }
        // Resume scanning where this writer's knowledge ends (frames before it are valid).
        let start = (knownEnd > 0 && knownEnd <= size) ? knownEnd : firstFrame
        let scan = try ChangeLogReader.scanFrames(fd: fd, path: path, from: start, fileLength: size,
                                                  maxPayloadLength: maxPayloadLength) { _ in }
        if !scan.damage.isEmpty { return nil }
        if scan.validEnd < size {
            try POSIX.truncate(fd, to: scan.validEnd, path: path)
        }
        return (scan.validEnd, size - scan.validEnd)
    }
}
