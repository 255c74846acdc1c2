#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CArchive
import Foundation
import Testing
@testable import ImprintBundle
import ImprintTestSupport
import ImprintFiles

/// One entry of a hand-built (possibly hostile) archive.
struct CraftedEntry {
    var path: String
    var type: UInt32 = 0o100000
    var data: [UInt8] = []
    var symlink: String? = nil
    var hardlink: String? = nil
    /// Declared size, when it should differ from `data.count` (0 for links).
    var declaredSize: Int64? = nil
    /// Bytes of zeros to stream as content instead of `data` (for bombs).
    var zeros: Int = 0
}

enum CraftedFormat { case tarZstd, zip }

/// Writes entries with libarchive exactly as given: no path sanitising.
func craftArchive(_ path: String, _ entries: [CraftedEntry], format: CraftedFormat = .tarZstd) throws {
    let a = archive_write_new()!
    defer { archive_write_free(a) }
    switch format {
    case .tarZstd:
        archive_write_set_format_pax_restricted(a)
        archive_write_add_filter_zstd(a)
    case .zip:
        archive_write_set_format_zip(a)
    }
    try #require(archive_write_open_filename(a, path) == ARCHIVE_OK)
    let zeros = [UInt8](repeating: 0, count: 1 << 16)
    for e in entries {
        let entry = archive_entry_new()!
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname(entry, e.path)
        archive_entry_set_filetype(entry, e.type)
        archive_entry_set_perm(entry, 0o644)
        if let target = e.symlink { archive_entry_set_symlink(entry, target) }
        if let target = e.hardlink { archive_entry_set_hardlink(entry, target) }
        let size = e.declaredSize ?? Int64(e.zeros > 0 ? e.zeros : e.data.count)
        archive_entry_set_size(entry, e.type == 0o100000 && e.hardlink == nil ? size : 0)
        try #require(archive_write_header(a, entry) == ARCHIVE_OK, "header for \(e.path): \(String(cString: archive_error_string(a)))")
        if e.zeros > 0 {
            var left = e.zeros
            while left > 0 {
                let n = min(left, zeros.count)
                _ = zeros.withUnsafeBytes { archive_write_data(a, $0.baseAddress, n) }
                left -= n
            }
        } else if !e.data.isEmpty {
            _ = e.data.withUnsafeBytes { archive_write_data(a, $0.baseAddress, $0.count) }
        }
    }
    try #require(archive_write_close(a) == ARCHIVE_OK)
}

@Suite struct BundleArchiveTests {
    func makeBundle(_ dir: TemporaryDirectory) throws -> BundleLayout {
        let layout = BundleLayout(root: dir.file("paper.imprint"))
        try layout.createDirectories()
        try BundleMetadata(documentID: "d1", title: "Paper", created: Date(timeIntervalSince1970: 1_800_000_000)).write(to: layout.metadataPath)
        let writer = try ChangeLogWriter(path: layout.changeLogPath(for: DeviceID("laptop")), lock: layout.logLock(for: DeviceID("laptop")))
        try writer.append(contentsOf: [record("one"), record("two")])
        _ = try AssetStore(layout: layout).add(bytes: [UInt8](repeating: 9, count: 300_000))
        try writeFile(layout.root + "/future-file.dat", [1, 2, 3])
        return layout
    }

    /// Every regular file under `root`, relative path → bytes.
    func tree(_ root: String) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)!
        while let relative = enumerator.nextObject() as? String {
            let full = root + "/" + relative
            if POSIX.isRegularFile(full) { result[relative] = try readFile(full) }
        }
        return result
    }

    @Test func roundTripKeepsEveryBundleFileButLocks() throws {
        let dir = TemporaryDirectory("archive")
        let layout = try makeBundle(dir)
        let count = try BundleArchive.archive(bundleAt: layout.root, to: dir.file("paper.tar.zst"))
        #expect(count == 4)
        let extraction = try BundleArchive.unarchive(dir.file("paper.tar.zst"), to: dir.file("out/copy.imprint"))
        #expect(extraction.files == 4)
        var original = try tree(layout.root)
        original = original.filter { !$0.key.hasPrefix("locks/") }
        #expect(try tree(dir.file("out/copy.imprint")) == original)
        #expect(try ChangeLogReader.read(at: dir.file("out/copy.imprint/changes/laptop.log")).records == [record("one"), record("two")])
        // The archive is really zstd-compressed tar.
        let magic = Array(try readFile(dir.file("paper.tar.zst")).prefix(4))
        #expect(magic == [0x28, 0xB5, 0x2F, 0xFD])
        let again = #expect(throws: BundleError.self) { try BundleArchive.unarchive(dir.file("paper.tar.zst"), to: dir.file("out/copy.imprint")) }
        #expect(again?.code == .alreadyExists)
    }

    @Test func zipArchivesAreAcceptedToo() throws {
        let dir = TemporaryDirectory("archive")
        try craftArchive(dir.file("b.zip"), [
            CraftedEntry(path: "metadata.json", data: try BundleMetadata(documentID: "z", title: "", created: Date(timeIntervalSince1970: 0)).encoded()),
            CraftedEntry(path: "assets/", type: 0o040000),
            CraftedEntry(path: "assets/x", data: [1, 2, 3]),
        ], format: .zip)
        try BundleArchive.unarchive(dir.file("b.zip"), to: dir.file("z.imprint"))
        #expect(try readFile(dir.file("z.imprint/assets/x")) == [1, 2, 3])
    }

    struct HostileCase: Sendable, CustomTestStringConvertible {
        let label: String
        let code: BundleError.Code
        let format: CraftedFormat
        let limits: ArchiveLimits
        let entries: @Sendable () -> [CraftedEntry]
        var testDescription: String { label }
    }

    static let metadataEntry = CraftedEntry(path: "metadata.json", data: Array("{}".utf8))

    static let hostile: [HostileCase] = [
        HostileCase(label: "dot-dot traversal", code: .archivePathEscape, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "../escaped.txt", data: [1])]
        },
        HostileCase(label: "dot-dot in the middle", code: .archivePathEscape, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "assets/../../escaped.txt", data: [1])]
        },
        HostileCase(label: "absolute path", code: .archivePathEscape, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "/tmp/imprint-escaped.txt", data: [1])]
        },
        HostileCase(label: "zip traversal", code: .archivePathEscape, format: .zip, limits: .default) {
            [metadataEntry, CraftedEntry(path: "../../zip-escaped.txt", data: [1])]
        },
        HostileCase(label: "symlink out", code: .archivePathEscape, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "assets/link", type: 0o120000, symlink: "../../../etc/passwd")]
        },
        HostileCase(label: "absolute symlink", code: .archivePathEscape, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "link", type: 0o120000, symlink: "/etc")]
        },
        HostileCase(label: "symlink inside", code: .archiveForbiddenEntryType, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "link", type: 0o120000, symlink: "metadata.json")]
        },
        HostileCase(label: "hard link out", code: .archivePathEscape, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "assets/h", hardlink: "/etc/passwd")]
        },
        HostileCase(label: "hard link via dot-dot", code: .archivePathEscape, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "assets/h", hardlink: "../outside")]
        },
        HostileCase(label: "character device", code: .archiveForbiddenEntryType, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "dev", type: 0o020000)]
        },
        HostileCase(label: "block device", code: .archiveForbiddenEntryType, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "blk", type: 0o060000)]
        },
        HostileCase(label: "fifo", code: .archiveForbiddenEntryType, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "fifo", type: 0o010000)]
        },
        HostileCase(label: "zstd bomb", code: .archiveLimitExceeded, format: .tarZstd,
                    limits: ArchiveLimits(maxTotalBytes: 1 << 20)) {
            [metadataEntry, CraftedEntry(path: "assets/bomb", zeros: 8 << 20)]
        },
        HostileCase(label: "zip bomb", code: .archiveLimitExceeded, format: .zip,
                    limits: ArchiveLimits(maxTotalBytes: 1 << 20)) {
            [metadataEntry, CraftedEntry(path: "assets/bomb", zeros: 8 << 20)]
        },
        HostileCase(label: "bomb spread over many files", code: .archiveLimitExceeded, format: .tarZstd,
                    limits: ArchiveLimits(maxTotalBytes: 1 << 20)) {
            [metadataEntry] + (0..<5).map { CraftedEntry(path: "assets/part\($0)", zeros: 300_000) }
        },
        HostileCase(label: "too many entries", code: .archiveLimitExceeded, format: .tarZstd,
                    limits: ArchiveLimits(maxEntries: 10)) {
            [metadataEntry] + (0..<20).map { CraftedEntry(path: "assets/f\($0)", data: [UInt8($0)]) }
        },
        HostileCase(label: "too deep", code: .archivePathEscape, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: Array(repeating: "d", count: 40).joined(separator: "/") + "/f", data: [1])]
        },
        HostileCase(label: "no bundle inside", code: .corrupt, format: .tarZstd, limits: .default) {
            [CraftedEntry(path: "readme.txt", data: [1])]
        },
        // A 1 MB archive must not expand to 1 GB: bounded by ratio as well as by total.
        HostileCase(label: "ratio bomb under the total cap", code: .archiveLimitExceeded, format: .tarZstd,
                    limits: ArchiveLimits(maxExpansionRatio: 100, ratioFloorBytes: 1 << 20)) {
            [metadataEntry, CraftedEntry(path: "assets/bomb", zeros: 16 << 20)]
        },
        HostileCase(label: "zip ratio bomb", code: .archiveLimitExceeded, format: .zip,
                    limits: ArchiveLimits(maxExpansionRatio: 100, ratioFloorBytes: 1 << 20)) {
            [metadataEntry, CraftedEntry(path: "assets/bomb", zeros: 16 << 20)]
        },
        HostileCase(label: "metadata.json twice", code: .corrupt, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "metadata.json", data: Array("{\"documentId\":\"other\"}".utf8))]
        },
        HostileCase(label: "zip with metadata.json twice", code: .corrupt, format: .zip, limits: .default) {
            [metadataEntry, CraftedEntry(path: "./metadata.json", data: Array("{}".utf8))]
        },
        HostileCase(label: "newline in a name", code: .archivePathEscape, format: .tarZstd, limits: .default) {
            [metadataEntry, CraftedEntry(path: "assets/evil\nname", data: [1])]
        },
        HostileCase(label: "escape sequence in a zip name", code: .archivePathEscape, format: .zip, limits: .default) {
            [metadataEntry, CraftedEntry(path: "assets/\u{1B}[2Jx", data: [1])]
        },
    ]

    @Test func anAbandonedStagingFolderIsRemovedByTheNextUnarchive() throws {
        let dir = TemporaryDirectory("archive")
        let layout = try makeBundle(dir)
        try BundleArchive.archive(bundleAt: layout.root, to: dir.file("b.tar.zst"))
        // What a SIGKILL during an earlier unarchive into out.imprint leaves: a staging folder
        // of a process that no longer runs.
        let abandoned = dir.file(".out.imprint.tmp-4194303-zz9")
        try FileManager.default.createDirectory(atPath: abandoned + "/changes", withIntermediateDirectories: true)
        let live = dir.file(".out.imprint.tmp-\(getpid())-live")
        try FileManager.default.createDirectory(atPath: live, withIntermediateDirectories: true)
        try BundleArchive.unarchive(dir.file("b.tar.zst"), to: dir.file("out.imprint"))
        #expect(!POSIX.exists(abandoned))
        #expect(POSIX.exists(live), "a staging folder of a running process is left alone")
    }

    @Test(arguments: hostile)
    func hostileArchivesAreRefusedAndLeaveNothing(_ c: HostileCase) throws {
        let dir = TemporaryDirectory("hostile")
        try FileManager.default.createDirectory(atPath: dir.file("inner/deeper"), withIntermediateDirectories: true)
        let archive = dir.file("inner/evil.archive")
        try craftArchive(archive, c.entries(), format: c.format)
        let destination = dir.file("inner/deeper/out.imprint")
        let before = try tree(dir.path)
        let error = #expect(throws: BundleError.self) { try BundleArchive.unarchive(archive, to: destination, limits: c.limits) }
        #expect(error?.code == c.code, "\(String(describing: error))")
        #expect(error?.isHostileOrCorrupt == true)
        // Nothing written: no destination, no staging directory, nothing new anywhere.
        #expect(!POSIX.exists(destination))
        #expect(try POSIX.listDirectory(dir.file("inner/deeper")) == [])
        #expect(try tree(dir.path) == before)
        #expect(!POSIX.exists("/tmp/imprint-escaped.txt"))
        // Directories the call had to create for the destination are gone as well.
        #expect(throws: BundleError.self) {
            try BundleArchive.unarchive(archive, to: dir.file("inner/new/newer/out.imprint"), limits: c.limits)
        }
        #expect(!POSIX.exists(dir.file("inner/new")))
    }

    @Test func entryPathRules() throws {
        let limits = ArchiveLimits.default
        #expect(try ArchiveEntryPath.components(of: "./a/./b/", limits: limits) == ["a", "b"])
        for bad in ["", ".", "/", "..", "a/../b", "/abs", "C:/x", "c:x", "a\\..\\b", String(repeating: "x", count: 256)] {
            #expect(throws: BundleError.self, "\(bad)") { try ArchiveEntryPath.components(of: bad, limits: limits) }
        }
        #expect(!ArchiveEntryPath.linkTargetEscapes(entry: ["a", "l"], target: "../b"))
        #expect(ArchiveEntryPath.linkTargetEscapes(entry: ["a", "l"], target: "../../b"))
        #expect(ArchiveEntryPath.linkTargetEscapes(entry: ["l"], target: "/etc"))
    }

    @Test func archivesMadeByTarFromInsideTheBundleAreAccepted() throws {
        // `tar -C paper.imprint -cf x .` writes "./" first and "./"-prefixed paths.
        let dir = TemporaryDirectory("archive")
        try craftArchive(dir.file("dot.tar.zst"), [
            CraftedEntry(path: "./", type: 0o040000),
            CraftedEntry(path: "./metadata.json", data: Array("{}".utf8)),
            CraftedEntry(path: "./changes/", type: 0o040000),
            CraftedEntry(path: "./changes/a.log", data: [1]),
        ])
        let result = try BundleArchive.unarchive(dir.file("dot.tar.zst"), to: dir.file("dot.imprint"))
        #expect(result.files == 2)
        #expect(try readFile(dir.file("dot.imprint/changes/a.log")) == [1])
        // But a file may not claim the root.
        try craftArchive(dir.file("rootfile.tar.zst"), [Self.metadataEntry, CraftedEntry(path: ".", data: [1])])
        let error = #expect(throws: BundleError.self) { try BundleArchive.unarchive(dir.file("rootfile.tar.zst"), to: dir.file("r.imprint")) }
        #expect(error?.isHostileOrCorrupt == true, "\(String(describing: error))")
        #expect(!POSIX.exists(dir.file("r.imprint")))
    }

    @Test func hardLinkInsideBecomesACopy() throws {
        let dir = TemporaryDirectory("archive")
        try craftArchive(dir.file("h.tar.zst"), [
            Self.metadataEntry,
            CraftedEntry(path: "assets/a", data: [5, 6, 7]),
            CraftedEntry(path: "assets/b", hardlink: "assets/a"),
        ])
        try BundleArchive.unarchive(dir.file("h.tar.zst"), to: dir.file("h.imprint"))
        #expect(try readFile(dir.file("h.imprint/assets/b")) == [5, 6, 7])
        var a = stat(), b = stat()
        stat(dir.file("h.imprint/assets/a"), &a)
        stat(dir.file("h.imprint/assets/b"), &b)
        #expect(a.st_ino != b.st_ino)
    }

    @Test func garbageIsALibraryErrorNotACrash() throws {
        let dir = TemporaryDirectory("archive")
        var generator = SplitMix64(seed: testSeed("archive garbage", fallback: 4242))
        try writeFile(dir.file("junk"), (0..<5000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let error = #expect(throws: BundleError.self) { try BundleArchive.unarchive(dir.file("junk"), to: dir.file("j.imprint")) }
        #expect(error?.code == .archiveLibrary)
        #expect(!POSIX.exists(dir.file("j.imprint")))
        // A valid archive cut short.
        let layout = try makeBundle(dir)
        try BundleArchive.archive(bundleAt: layout.root, to: dir.file("ok.tar.zst"))
        let full = try readFile(dir.file("ok.tar.zst"))
        try writeFile(dir.file("cut.tar.zst"), Array(full.prefix(full.count / 2)))
        #expect(throws: BundleError.self) { try BundleArchive.unarchive(dir.file("cut.tar.zst"), to: dir.file("c.imprint")) }
        #expect(!POSIX.exists(dir.file("c.imprint")))
        #expect(try POSIX.listDirectory(dir.path).filter { $0.hasPrefix(".") } == [])
    }
}

/// Interoperability with GNU tar + zstd (`scripts/install-deps.sh` installs both); on a
/// machine without them the suite is skipped and says why.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tar")
                    && FileManager.default.isExecutableFile(atPath: "/usr/bin/zstd"),
                "GNU tar and zstd (/usr/bin/tar, /usr/bin/zstd) not installed: archive interop with tar NOT TESTED"))
struct BundleArchiveTarInteropTests {
    func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func gnuTarReadsOurArchivesAndWeReadGnuTars() throws {
        let dir = TemporaryDirectory("interop")
        let layout = BundleLayout(root: dir.file("paper.imprint"))
        try layout.createDirectories()
        try BundleMetadata(documentID: "i", title: "Interop", created: Date(timeIntervalSince1970: 0)).write(to: layout.metadataPath)
        try ChangeLogWriter(path: layout.changeLogPath(for: DeviceID("a")), lock: layout.logLock(for: DeviceID("a"))).append(record("x"))

        try BundleArchive.archive(bundleAt: layout.root, to: dir.file("ours.tar.zst"))
        try FileManager.default.createDirectory(atPath: dir.file("by-tar"), withIntermediateDirectories: false)
        #expect(try run(["--zstd", "-xf", dir.file("ours.tar.zst"), "-C", dir.file("by-tar")]) == 0)
        #expect(try readFile(dir.file("by-tar/changes/a.log")) == readFile(layout.changeLogPath(for: DeviceID("a"))))

        #expect(try run(["--zstd", "-cf", dir.file("theirs.tar.zst"), "-C", layout.root, "."]) == 0)
        try BundleArchive.unarchive(dir.file("theirs.tar.zst"), to: dir.file("from-tar.imprint"))
        #expect(try ChangeLogReader.read(at: dir.file("from-tar.imprint/changes/a.log")).records == [record("x")])
    }
}
