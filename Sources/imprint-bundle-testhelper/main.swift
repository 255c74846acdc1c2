// Child process for ImprintBundleTests: the crash test kills it with SIGKILL mid-save, the
// lock test runs several copies against one log at once. Not a user-facing tool.
//
//   imprint-bundle-testhelper append-until-killed <log> <lock> <tag> <chunk>
//       continues the log's sequence of <tag> records forever, printing "saved N" (N = records
//       of <tag> now durable) after each append returns; writes in pieces of <chunk> bytes.
//   imprint-bundle-testhelper compact-loop <log> <lock> <snapshot> <stop-file>
//       until <stop-file> exists: folds every record of the log into the snapshot (written
//       under the lock), then rewrites the log without them; prints "compactions N" at the end.
//   imprint-bundle-testhelper hold-lock <lock>
//       takes the lock, prints "locked", then sleeps until killed.
//   imprint-bundle-testhelper hammer <log> <lock> <tag> <count> <chunk> <start-file> [<pause-us>]
//       waits until <start-file> exists (so several copies start together), appends records
//       <tag>:0..<count-1> (pausing <pause-us> microseconds after each), then prints "done <count>".
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

let args = CommandLine.arguments
guard args.count >= 2 else { fail("usage: see the comment at the top of main.swift") }
do {
    switch args[1] {
    case "append-until-killed" where args.count == 6:
        let (log, lock, tag) = (args[2], args[3], args[4])
        guard let chunk = Int(args[5]) else { fail("bad chunk") }
        let writer = try ChangeLogWriter(path: log, lock: FileLock(path: lock), maxBytesPerWrite: chunk)
        var index = try existingCount(log: log, tag: tag)
        while true {
            // Sometimes several records in one append, to exercise multi-frame writes.
            let batch = index % 5 == 0 ? 3 : 1
            try writer.append(contentsOf: (index..<(index + batch)).map { makeRecord(tag: tag, index: $0) })
            index += batch
            say("saved \(index)")
        }
    case "compact-loop" where args.count == 6:
        let (log, lockPath, snapshotPath, stopFile) = (args[2], args[3], args[4], args[5])
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
            }
            usleep(2000)
        }
        say("compactions \(compactions)")
    case "hold-lock" where args.count == 3:
        let held = try FileLock(path: args[2]).acquire()
        say("locked")
        while true { sleep(60) }
        held.release()
    case "hammer" where args.count == 8 || args.count == 9:
        let pause = args.count == 9 ? UInt32(args[8]) ?? 0 : 0
        let (log, lock, tag) = (args[2], args[3], args[4])
        guard let count = Int(args[5]), let chunk = Int(args[6]) else { fail("bad count or chunk") }
        let deadline = time(nil) + 30
        while access(args[7], F_OK) != 0 {
            if time(nil) > deadline { fail("start file never appeared") }
            usleep(1000)
        }
        let writer = try ChangeLogWriter(path: log, lock: FileLock(path: lock), maxBytesPerWrite: chunk)
        for index in 0..<count {
            try writer.append(makeRecord(tag: tag, index: index))
            if pause > 0 { usleep(pause) }
        }
        say("done \(count)")
    default:
        fail("unknown mode or wrong arguments: \(args.dropFirst().joined(separator: " "))")
    }
} catch {
    fail("\(error)")
}
