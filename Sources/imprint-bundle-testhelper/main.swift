// Child process for ImprintBundleTests: the crash test kills it with SIGKILL mid-save, the
// lock test runs several copies against one log at once. Not a user-facing tool.
//
//   imprint-bundle-testhelper append-until-killed <log> <lock> <tag> <chunk>
//       continues the log's sequence of <tag> records forever, printing "saved N" (N = records
//       of <tag> now durable) after each append returns; writes in pieces of <chunk> bytes.
//   imprint-bundle-testhelper append-until-size-limit <log> <lock> <tag> <chunk> <limit-bytes>
//       as append-until-killed, under a file size limit (RLIMIT_FSIZE): the kernel kills the
//       helper (SIGXFSZ) at the write that would pass <limit-bytes>, inside whatever frame is
//       being written there; the test picks the byte, not the scheduler.
//   imprint-bundle-testhelper compact-loop <log> <lock> <snapshot> <stop-file> [<progress-file>]
//       until <stop-file> exists: folds every record of the log into the snapshot (written
//       under the lock), then rewrites the log without them; prints "compactions N" at the end
//       and, after each compaction, writes N to <progress-file>.
//   imprint-bundle-testhelper hold-lock <lock>
//       takes the lock, prints "locked", then sleeps until killed.
//   imprint-bundle-testhelper hammer-in-step <log> <lock> <tag> <count> <chunk> <progress-dir> <writers>
//       appends records <tag>:0..<count-1>, each only once all <writers> writers have appended
//       the one before (each writes its count to <progress-dir>/<tag>), so that every record
//       of every writer is attempted together with the others'; prints "done <count>".
//   imprint-bundle-testhelper append-between-compactions <log> <lock> <tag> <count> <chunk> <progress-file> <rounds>
//       appends records <tag>:0..<count-1> in <rounds> parts and, after each part, waits until
//       the compactor's <progress-file> shows another compaction: the log is rewritten under
//       the appender at least <rounds> times; prints "done <count>".
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import ImprintBundle
import ImprintFiles

/// The deterministic record number `index` of `tag` (the tests build the same bytes).
func makeRecord(tag: String, index: Int) -> LogRecord {
    var bytes = Array("\(tag):\(index):".utf8)
    var length = (index &* 7919) % 3000 + (index % 3 == 0 ? 16_000 : 0)
    if index % 37 == 5 { length += 100_000 }
    bytes += [UInt8](repeating: UInt8(truncatingIfNeeded: index &* 31 &+ 7), count: length)
    let hash = try! RecordHash(bytes: Array(SHA256.hash(data: bytes)))
    return LogRecord(hash: hash, bytes: bytes)
}

func writeLine(_ fd: Int32, _ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
        if n <= 0 { if errno == EINTR { continue }; return }
        offset += n
    }
}

func fail(_ message: String) -> Never {
    writeLine(2, "error: \(message)")
    exit(1)
}

/// One unbuffered write per line, so a line is either wholly out or not at all.
func say(_ line: String) {
    writeLine(1, line)
}

/// Records of `tag` already in the log, checked to be exactly 0..<n in order.
func existingCount(log: String, tag: String) throws -> Int {
    guard access(log, F_OK) == 0 else { return 0 }
    let contents = try ChangeLogReader.read(at: log)
    var count = 0
    for record in contents.records {
        let prefix = Array("\(tag):".utf8)
        guard record.bytes.starts(with: prefix) else { continue }
        guard record == makeRecord(tag: tag, index: count) else {
            fail("record \(count) of \(tag) is not the expected one")
        }
        count += 1
    }
    return count
}

/// Writes `count` to `path` atomically (a reader sees the old or the new number).
func writeCount(_ count: Int, to path: String) throws {
    let temporary = path + ".tmp-\(getpid())"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { fail("cannot write \(temporary)") }
    writeLine(fd, String(count))
    close(fd)
    guard rename(temporary, path) == 0 else { fail("cannot rename \(temporary)") }
}

/// The number in `path`, or nil if there is none yet.
func readCount(_ path: String) -> Int? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 32)
    guard fgets(&buffer, 32, file) != nil else { return nil }
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return Int(String(decoding: bytes, as: UTF8.self).trimmingWhitespace())
}

/// The names in a directory, without temporary files.
func listDirectory(_ path: String) throws -> [String] {
    guard let directory = opendir(path) else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != ".", name != "..", !name.contains(".tmp-") { names.append(name) }
    }
    return names
}

/// Polls `condition` every millisecond; fails the helper after 120 s (a wait on another
/// process's progress, bounded only so that a broken test ends).
func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
    let deadline = time(nil) + 120
    while try !condition() {
        if time(nil) > deadline { fail("gave up waiting for \(what)") }
        usleep(1000)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\n" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\n" { scalars.removeLast() }
        return String(scalars)
    }
}

let args = CommandLine.arguments
guard args.count >= 2 else { fail("usage: see the comment at the top of main.swift") }
do {
    switch args[1] {
    case "append-until-killed" where args.count == 6, "append-until-size-limit" where args.count == 7:
        let (log, lock, tag) = (args[2], args[3], args[4])
        guard let chunk = Int(args[5]) else { fail("bad chunk") }
        if args.count == 7 {
            guard let limit = UInt64(args[6]) else { fail("bad limit") }
            // The signal's default action, unblocked (a parent may have left it ignored or
            // blocked, which would turn the kill into an EFBIG error), and no core file.
            signal(SIGXFSZ, SIG_DFL)
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, SIGXFSZ)
            sigprocmask(SIG_UNBLOCK, &unblock, nil)
            var none = rlimit(rlim_cur: 0, rlim_max: 0)
            var rlim = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
            #if canImport(Glibc)
            guard setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) == 0,
                  setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &rlim) == 0 else { fail("setrlimit") }
            #else
            guard setrlimit(RLIMIT_CORE, &none) == 0, setrlimit(RLIMIT_FSIZE, &rlim) == 0 else { fail("setrlimit") }
            #endif
        }
        let writer = try ChangeLogWriter(path: log, lock: FileLock(path: lock), maxBytesPerWrite: chunk)
        var index = try existingCount(log: log, tag: tag)
        while true {
            // Sometimes several records in one append, to exercise multi-frame writes.
            let batch = index % 5 == 0 ? 3 : 1
            try writer.append(contentsOf: (index..<(index + batch)).map { makeRecord(tag: tag, index: $0) })
            index += batch
            say("saved \(index)")
        }
    case "compact-loop" where args.count == 6 || args.count == 7:
        let (log, lockPath, snapshotPath, stopFile) = (args[2], args[3], args[4], args[5])
        let progressFile = args.count == 7 ? args[6] : nil
        let lock = FileLock(path: lockPath)
        let writer = try ChangeLogWriter(path: log, lock: lock)
        var covered: [RecordHash] = []
        var coveredSet = Set<RecordHash>()
        var compactions = 0
        while access(stopFile, F_OK) != 0 {
            // Read by path, as a real compaction does after loading the bundle.
            let fresh = try ChangeLogReader.read(at: log).records.filter { !coveredSet.contains($0.hash) }
            if !fresh.isEmpty {
                for record in fresh where coveredSet.insert(record.hash).inserted { covered.append(record.hash) }
                let snapshot = SnapshotFile(coveredChanges: covered, snapshot: Array("folded \(covered.count)".utf8))
                try lock.withLock { try snapshot.write(to: snapshotPath) }
                try writer.rewrite { !coveredSet.contains($0.hash) }
                compactions += 1
                if let progressFile { try writeCount(compactions, to: progressFile) }
            }
            usleep(2000)
        }
        say("compactions \(compactions)")
    case "hold-lock" where args.count == 3:
        let held = try FileLock(path: args[2]).acquire()
        say("locked")
        while true { sleep(60) }
        held.release()
    case "hammer-in-step" where args.count == 9:
        let (log, lock, tag, progressDirectory) = (args[2], args[3], args[4], args[7])
        guard let count = Int(args[5]), let chunk = Int(args[6]), let writers = Int(args[8]) else { fail("bad numbers") }
        let writer = try ChangeLogWriter(path: log, lock: FileLock(path: lock), maxBytesPerWrite: chunk)
        for index in 0..<count {
            // Every writer has appended `index` records: all of them now append the next.
            try waitUntil("\(writers) writers at \(index)") {
                let counts = (try? listDirectory(progressDirectory))?.compactMap { readCount(progressDirectory + "/" + $0) } ?? []
                return counts.count == writers && counts.allSatisfy { $0 >= index }
            }
            try writer.append(makeRecord(tag: tag, index: index))
            try writeCount(index + 1, to: progressDirectory + "/" + tag)
        }
        say("done \(count)")
    case "append-between-compactions" where args.count == 9:
        let (log, lock, tag, progressFile) = (args[2], args[3], args[4], args[7])
        guard let count = Int(args[5]), let chunk = Int(args[6]), let rounds = Int(args[8]), rounds >= 1 else { fail("bad numbers") }
        let writer = try ChangeLogWriter(path: log, lock: FileLock(path: lock), maxBytesPerWrite: chunk)
        var index = 0
        for round in 1...rounds {
            let end = count * round / rounds
            while index < end {
                try writer.append(makeRecord(tag: tag, index: index))
                index += 1
            }
            // Wait for a compaction after this part: the next append meets a rewritten log.
            let seen = readCount(progressFile) ?? 0
            try waitUntil("a compaction after part \(round)") { (readCount(progressFile) ?? 0) > seen }
        }
        say("done \(count)")
    default:
        fail("unknown mode or wrong arguments: \(args.dropFirst().joined(separator: " "))")
    }
} catch {
    fail("\(error)")
}
