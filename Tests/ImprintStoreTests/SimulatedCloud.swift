import Foundation
import ImprintBundle

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
                        let copy = conflictPath(for: path, style: style, machine: machine.name)
                        precondition(ConflictCopyName.parse((copy as NSString).lastPathComponent) != nil, "unrecognised \(copy)")
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
        counter += 1
        let stem = bundle.hasSuffix(".imprint") ? String(bundle.dropLast(".imprint".count)) : bundle
        let duplicate = "\(stem) \(counter + 1).imprint"
        precondition(ConflictCopyName.rootOriginal(of: duplicate) == bundle)
        for (path, data) in local where path.hasPrefix(bundle + "/") {
            let copy = duplicate + path.dropFirst(bundle.count)
            try write(data, to: machine.root + "/" + copy)
            files[copy] = data
            machine.base[copy] = data
        }
    }

    private func conflictPath(for path: String, style: ConflictStyle, machine: String) -> String {
        counter += 1
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let dot = name.lastIndex(of: ".")
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        let time = String(format: "%02d%02d%02d", (counter / 3600) % 24, (counter / 60) % 60, counter % 60)
        let copy: String
        switch style {
        case .dropbox: copy = "\(stem) (\(machine) \(counter)'s conflicted copy 2026-11-21)\(ext)"
        case .syncthing: copy = "\(stem).sync-conflict-20261121-\(time)-ABCDEFG\(ext)"
        case .iCloudFile, .iCloudBundle: copy = "\(stem) \(counter + 1)\(ext)"
        case .oneDrive: copy = "\(stem)-\(machine.uppercased())\(counter)\(ext)"
        case .nextcloud: copy = "\(stem) (conflicted copy 2026-11-21 \(time))\(ext)"
        case .nextcloudLegacy: copy = "\(stem)_conflict-20261121-\(time)\(ext)"
        }
        return directory.isEmpty ? copy : directory + "/" + copy
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
