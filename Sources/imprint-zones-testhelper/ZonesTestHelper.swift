// Child process for ImprintZonesTests: streams a large generated file through ZoneChunker
// into a FolderZoneStore and back out to another file, then prints its peak resident set, so
// the test can check that the payload never sat whole in memory.
//
// Usage: imprint-zones-testhelper stream <directory> <mebibytes> <seed>
// Prints one JSON line: {"bytes":N,"chunks":N,"identical":true|false,"peakRSSBytes":N}.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import ImprintZones

@main
struct ZonesTestHelper {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 5, arguments[1] == "stream", let mebibytes = Int(arguments[3]), let seed = UInt64(arguments[4]) else {
            FileHandle.standardError.write(Data("usage: imprint-zones-testhelper stream <directory> <mebibytes> <seed>\n".utf8))
            exit(2)
        }
        let directory = arguments[2]
        let source = directory + "/source.bin"
        let copy = directory + "/copy.bin"
        let sourceHash = try generate(source, bytes: mebibytes << 20, seed: seed)

        let store = try FolderZoneStore(root: directory + "/zones", writer: "helper")
        _ = try await store.createZone("doc_stream")
        let chunker = try ZoneChunker()
        let uploaded = try await chunker.upload(fileAt: source, to: store, zoneId: "doc_stream", baseName: "big", recordType: "attachment")

        // Read back what the change feed says, as another reader would.
        var records: [ZoneRecord] = []
        var token: ZoneChangeToken?
        repeat {
            let page = try await store.fetchChanges(zoneId: "doc_stream", since: token, limit: 1000)
            records += page.records
            token = page.changeToken
            if !page.moreComing { break }
        } while true
        let chunks = try PayloadChunks(records: records)
        _ = FileManager.default.createFile(atPath: copy, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: copy))
        try await chunks.write(from: store, zoneId: "doc_stream", to: handle)
        try handle.close()
        let copyHash = try hashFile(copy)

        let peak = peakResidentBytes()
        print("{\"bytes\":\(uploaded.size),\"chunks\":\(uploaded.records.count),\"identical\":\(copyHash == sourceHash),\"peakRSSBytes\":\(peak)}")
    }

    /// Writes `bytes` pseudo-random bytes (xorshift from `seed`) 1 MiB at a time; returns their SHA-256.
    static func generate(_ path: String, bytes: Int, seed: UInt64) throws -> SHA256.Digest {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var state = seed | 1
        var hasher = SHA256()
        var left = bytes
        var block = [UInt8](repeating: 0, count: 1 << 20)
        while left > 0 {
            let count = min(left, block.count)
            block.withUnsafeMutableBytes { raw in
                let words = raw.bindMemory(to: UInt64.self)
                for i in 0..<words.count {
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    words[i] = state
                }
            }
            let piece = block[0..<count]
            hasher.update(data: piece)
            try handle.write(contentsOf: piece)
            left -= count
        }
        try handle.close()
        return hasher.finalize()
    }

    static func hashFile(_ path: String) throws -> SHA256.Digest {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var hasher = SHA256()
        while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty { hasher.update(data: data) }
        return hasher.finalize()
    }

    /// The peak resident set of this process image. On Linux `VmHWM` from /proc/self/status:
    /// `getrusage`'s `ru_maxrss` survives `execve`, so it would report the test process that
    /// forked this one.
    static func peakResidentBytes() -> Int {
        #if os(Linux)
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kib = Int(line.split(separator: " ").dropFirst().first ?? "") {
            return kib * 1024
        }
        return -1
        #else
        var usage = rusage()
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss) // bytes on Darwin
        #endif
    }
}
