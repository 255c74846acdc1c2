import Foundation
import ImprintBundle
import ImprintTestSupport

/// How a sync tool names the loser of a conflict (docs/bundle-format.md, section 5).
enum ConflictStyle: String, CaseIterable {
    case dropbox, syncthing, iCloudFile, iCloudBundle, oneDrive, nextcloud, nextcloudLegacy
}

/// One simulated machine: a local sync folder and what it last agreed on with the cloud.
final class Machine {
    let name: String
    let root: String
    /// Content of each file at the last sync with the cloud (relative path -> bytes).
    var base: [String: Data] = [:]

    init(name: String, root: String) {
        self.name = name
        self.root = root
        try! FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }
}

/// A dumb file copier with a central copy, like Dropbox, iCloud Drive or a Syncthing mesh
/// with one always-on peer: it knows nothing of bundles. Files changed only on one side are
/// copied; files changed on both sides become a conflict copy named in the chosen style (or,
/// iCloud at bundle level, a whole `paper 2.imprint` duplicate). Deletions propagate when the
/// other side did not change the file. Lock files and atomic-write temporaries are not synced.
final class SimulatedCloud {
    private(set) var files: [String: Data] = [:]
    private var counter = 0
    /// Conflict copies produced, by style (the test checks every style occurred).
    private(set) var conflicts: [ConflictStyle: Int] = [:]

    /// Two-way sync of `machine` with the cloud.
    func sync(_ machine: Machine, style: ConflictStyle) throws {
        let local = try snapshot(machine.root)
        var paths = Set(local.keys).union(files.keys).union(machine.base.keys)
        var duplicatedBundles = Set<String>()
        for path in paths.sorted() {
            let mine = local[path], theirs = files[path], base = machine.base[path]
            if mine == theirs {
                machine.base[path] = mine
                continue
            }
            let localChanged = mine != base
            let cloudChanged = theirs != base
            switch (localChanged, cloudChanged) {
            case (true, false):
                files[path] = mine
            case (false, true):
                try write(theirs, to: machine.root + "/" + path)
            default:
                // Both changed. A deletion loses against a change; two changes conflict.
                if mine == nil {
                    try write(theirs, to: machine.root + "/" + path)
                } else if theirs == nil {
                    files[path] = mine
                } else {
                    conflicts[style, default: 0] += 1
                    if style == .iCloudBundle {
                        let bundle = String(path.prefix { $0 != "/" })
                        if !duplicatedBundles.contains(bundle) {
                            duplicatedBundles.insert(bundle)
                            try duplicateBundle(bundle, of: machine, local: local, into: &paths)
                        }
                    } else {
                        let copy = try conflictPath(for: path, style: style,
                                                    taken: Set(files.keys).union(local.keys))
                        try write(mine, to: machine.root + "/" + copy)
                        files[copy] = mine
                        machine.base[copy] = mine
                    }
                    try write(theirs, to: machine.root + "/" + path)
                }
            }
            machine.base[path] = files[path]
            if files[path] == nil { machine.base[path] = nil }
        }
        try removeEmptyDirectories(machine.root)
    }

    private func duplicateBundle(_ bundle: String, of machine: Machine, local: [String: Data], into paths: inout Set<String>) throws {
        // Named as iCloud Drive names duplicates (a real example's decoration, the first free).
        let taken = Set(files.keys.map { String($0.prefix { $0 != "/" }) }).union(local.keys.map { String($0.prefix { $0 != "/" }) })
        let duplicate = try conflictPath(for: bundle, style: .iCloudBundle, taken: taken)
        for (path, data) in local where path.hasPrefix(bundle + "/") {
            let copy = duplicate + path.dropFirst(bundle.count)
            try write(data, to: machine.root + "/" + copy)
            files[copy] = data
            machine.base[copy] = data
        }
    }

    /// A conflict copy's path, named as the tool of `style` really names them: decorated as
    /// one of that tool's real examples (`RealConflictCopyNames`, not written to suit the
    /// parser), the first whose name is free.
    private func conflictPath(for path: String, style: ConflictStyle, taken: Set<String>) throws -> String {
        counter += 1
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let tool: String = switch style {
        case .dropbox: "dropbox"
        case .syncthing: "syncthing"
        case .iCloudFile, .iCloudBundle: "iCloudDrive"
        case .oneDrive: "oneDrive"
        case .nextcloud: "nextcloud"
        case .nextcloudLegacy: "nextcloudLegacy"
        }
        let examples = RealConflictCopyNames.of(tool)
        // A real example's decoration first; when a file conflicts again while its earlier
        // copies are still there, the example's number moves on, as the tool's clock would.
        for variant in 0..<1000 {
            for k in 0..<examples.count {
                guard let copy = examples[(counter + k) % examples.count].copy(of: name, variant: variant) else { continue }
                let full = directory.isEmpty ? copy : directory + "/" + copy
                if !taken.contains(full) { return full }
            }
        }
        throw SimulationError("every real \(tool) name for a copy of \(path) is taken")
    }

    struct SimulationError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The machine's files, without locks and temporaries.
    private func snapshot(_ root: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for path in regularFiles(under: root) {
            let name = (path as NSString).lastPathComponent
            if path.contains("/locks/") || (name.hasPrefix(".") && name.contains(".tmp-")) { continue }
            result[path] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + path))
        }
        return result
    }

    private func write(_ data: Data?, to path: String) throws {
        if let data {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: path))
        } else if FileManager.default.fileExists(atPath: path) {
            try FileManager.default.removeItem(atPath: path)
        }
    }

    /// Deleted duplicate bundles leave empty directories behind; a sync tool removes those.
    private func removeEmptyDirectories(_ root: String) throws {
        for entry in try FileManager.default.contentsOfDirectory(atPath: root) where entry.hasSuffix(".imprint") {
            let path = root + "/" + entry
            if regularFiles(under: path).allSatisfy({ $0.hasPrefix("locks/") }) && !FileManager.default.fileExists(atPath: path + "/metadata.json") {
                try FileManager.default.removeItem(atPath: path)
            }
        }
    }
}
