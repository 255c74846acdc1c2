import Foundation
import Testing
@testable import ImprintBundle
import ImprintTestSupport
import ImprintFiles

/// Two machines, each with its own copy of a bundle, and a crude file-sync tool between them
/// that copies new and changed files and, like Dropbox, keeps a "conflicted copy" when both
/// sides changed the same file. Every change made anywhere must end up loaded everywhere.
@Suite struct TwoMachineSyncTests {
    /// Copies every file of `from` that `to` lacks or has differently. A file changed on both
    /// sides since the last sync (`base` holds what was last synced) becomes a conflict copy.
    func sync(from: String, to: String, base: inout [String: [UInt8]]) throws {
        let fm = FileManager.default
        guard let enumerator = fm.enumerator(atPath: from) else { return }
        while let relative = enumerator.nextObject() as? String {
            if relative.hasPrefix("locks") { continue }
            let source = from + "/" + relative, target = to + "/" + relative
            guard POSIX.isRegularFile(source) else { continue }
            let bytes = try readFile(source)
            if !fm.fileExists(atPath: target) {
                try fm.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try writeFile(target, bytes)
            } else {
                let theirs = try readFile(target)
                if theirs == bytes { continue }
                let last = base[relative]
                if last == theirs {
                    try writeFile(target, bytes) // only the source side changed
                } else if last != bytes {
                    // Both sides changed: keep the target's, add the source's as a conflict copy.
                    let ext = (relative as NSString).pathExtension
                    let stem = (relative as NSString).deletingPathExtension
                    try writeFile(to + "/" + stem + " (machine-b's conflicted copy 2026-11-21)." + ext, bytes)
                    continue
                }
            }
            base[relative] = bytes
        }
    }

    @Test func everyChangeReachesBothMachinesAndConflictCopiesGetTidied() throws {
        let dir = TemporaryDirectory("twomachines")
        let aPath = dir.file("a/paper.imprint"), bPath = dir.file("b/paper.imprint")
        try FileManager.default.createDirectory(atPath: dir.file("a"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file("b"), withIntermediateDirectories: true)
        var base: [String: [UInt8]] = [:]

        let a = try BundleStore.create(at: aPath, device: DeviceID("laptop"),
                                       metadata: BundleMetadata(documentID: "doc", title: "v1", created: Date(timeIntervalSince1970: 1_800_000_000)))
        try a.append([record("a1")])
        try sync(from: aPath, to: bPath, base: &base)
        let b = try BundleStore.open(at: bPath, device: DeviceID("desktop"))
        #expect(try b.load().changes == [record("a1")])

        // Both edit offline, both touch metadata; b is also misconfigured to write as "laptop".
        try a.append([record("a2")])
        try a.updateMetadata { $0.title = "title from a"; $0.modified = Date(timeIntervalSince1970: 1_800_000_100) }
        try b.append([record("b1")])
        try b.updateMetadata { $0.extra["tag"] = .string("from b"); $0.modified = Date(timeIntervalSince1970: 1_800_000_050) }
        let impostor = try BundleStore.open(at: bPath, device: DeviceID("laptop"))
        try impostor.append([record("written on b as laptop")])

        try sync(from: aPath, to: bPath, base: &base)
        try sync(from: bPath, to: aPath, base: &base)
        let everything: Set<LogRecord> = [record("a1"), record("a2"), record("b1"), record("written on b as laptop")]
        #expect(Set(try a.load().changes) == everything)
        #expect(Set(try b.load().changes) == everything)
        #expect(try !a.layout.inventory().changeLogs.filter { $0.conflictCopy != nil }.isEmpty
                || !b.layout.inventory().changeLogs.filter { $0.conflictCopy != nil }.isEmpty)

        // Tidy on both, sync again: copies are gone, nothing is lost, metadata merged.
        for store in [a, b] { try store.tidyConflictCopies(settle: .immediate) }
        try sync(from: aPath, to: bPath, base: &base)
        try sync(from: bPath, to: aPath, base: &base)
        for store in [a, b] {
            let contents = try store.load()
            #expect(Set(contents.changes) == everything)
            #expect(contents.metadata.title == "title from a")
            #expect(contents.metadata.extra["tag"] == .string("from b"))
        }
    }
}
