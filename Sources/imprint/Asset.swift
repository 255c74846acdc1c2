import ArgumentParser
import Foundation
import ImprintBundle
import ImprintStore
import ImprintSync

/// `imprint asset add|list|get|rm <bundle> ...`: content-addressed attachments.
struct Asset: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Content-addressed assets of a bundle.",
        subcommands: [Add.self, List.self, Get.self, Remove.self, Fetch.self]
    )

    /// `asset add <bundle> <file>`: prints the asset id.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a file; prints its id (SHA-256 hex).")
        @Argument(help: "The bundle.") var bundle: String
        @Argument(help: "The file to add.") var file: String
        @Flag(help: "Print one JSON object.") var json = false
        @OptionGroup var options: DeviceOptions

        func run() throws {
            guard FileManager.default.fileExists(atPath: file) else { throw CommandFailure.user("no such file: \(file)") }
            let progress = TerminalProgress(json: json)
            progress.step("storing \(file) (hashing while copying)")
            let doc = try DocumentBundle.open(at: bundle, device: try options.resolve())
            let id: AssetID
            do {
                id = try doc.addAsset(contentsOf: file, name: URL(fileURLWithPath: file).lastPathComponent)
                progress.finish()
            } catch {
                progress.finish()
                throw error
            }
            if json { printJSON(["id": .string(id.hex), "size": .int(try doc.store.assets.size(of: id))]) } else { print(id.hex) }
        }
    }

    /// `asset list <bundle>`: one `id size` line per asset.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List assets: id and size.")
        @Argument(help: "The bundle.") var bundle: String
        @Flag(help: "Print one JSON object.") var json = false
        @OptionGroup var options: DeviceOptions

        func run() throws {
            let doc = try DocumentBundle.open(at: bundle, device: options.resolveForReading())
            let assets = try doc.store.assets.list()
            let names = try doc.assetReferences()
            if json {
                printJSON(["assets": .array(assets.map {
                    .object(["id": .string($0.id.hex), "size": .int($0.size), "name": .string(names[$0.id.hex] ?? "")])
                })])
            } else {
                for asset in assets { print("\(asset.id.hex) \(asset.size) \(names[asset.id.hex] ?? "")") }
            }
        }
    }

    /// `asset get <bundle> <id> [-o file]`: the asset's bytes, verified against its id.
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write an asset to a file (or stdout), verifying its hash.")
        @Argument(help: "The bundle.") var bundle: String
        @Argument(help: "The asset id, or an unambiguous prefix of it.") var id: String
        @Option(name: .shortAndLong, help: "Destination file (default: stdout).") var output: String?
        @OptionGroup var options: DeviceOptions

        func run() throws {
            let store = try BundleStore.open(at: bundle, device: options.resolveForReading())
            let assetID = try resolveAssetID(id, among: try store.assets.list().map(\.id), in: bundle)
            if let output {
                try store.assets.export(assetID, to: output)
            } else {
                fflush(nil)
                try store.assets.write(assetID, to: FileHandle.standardOutput.fileDescriptor)
            }
        }
    }

    /// `asset fetch <bundle> [<id>...]`: brings assets other members shared into the bundle.
    struct Fetch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fetch assets the other members of a shared document shared (all the bundle lacks, or the ones named).")
        @OptionGroup var options: SharedBundleOptions
        @Argument(help: "Asset ids or unambiguous prefixes (default: every shared asset the bundle lacks).") var ids: [String] = []

        func run() throws {
            let wanted = ids, bundle = options.bundle
            let fetched = try options.withDocument { doc, _ in
                let shared = try await doc.sharedAssets().map(\.id)
                return try await doc.fetchAssets(wanted.isEmpty ? nil : try wanted.map { try resolveAssetID($0, among: shared, in: bundle) })
            }
            if options.json {
                printJSON(["fetched": .array(fetched.map { .object(["id": .string($0.id.hex), "size": .int(Int($0.size))]) })])
            } else if fetched.isEmpty {
                print("nothing to fetch")
            } else {
                for asset in fetched { print("fetched \(asset.id.hex) (\(asset.size) bytes)") }
            }
        }
    }

    /// `asset rm <bundle> <id>`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove an asset.")
        @Argument(help: "The bundle.") var bundle: String
        @Argument(help: "The asset id, or an unambiguous prefix of it.") var id: String
        @Flag(help: "Print one JSON object.") var json = false
        @OptionGroup var options: DeviceOptions

        func run() throws {
            let doc = try DocumentBundle.open(at: bundle, device: try options.resolve())
            let known = try doc.store.assets.list().map(\.id) + doc.assetReferences().keys.compactMap { try? AssetID(hex: $0) }
            let assetID = try resolveAssetID(id, among: known, in: bundle)
            let id = assetID.hex
            let hadFile = doc.store.assets.contains(assetID)
            let hadReference = try doc.removeAsset(assetID)
            guard hadFile || hadReference else { throw CommandFailure.user("no asset \(id) in \(bundle)") }
            if json { printJSON(["removed": .string(id)]) }
        }
    }
}

/// The asset `text` names: a whole id, or a prefix (at least 4 hex digits) that exactly one
/// of `known` starts with.
func resolveAssetID(_ text: String, among known: [AssetID], in bundle: String) throws -> AssetID {
    let lowered = text.lowercased()
    if lowered.count == 64 { return try AssetID(hex: lowered) }
    guard lowered.count >= 4, lowered.allSatisfy(\.isHexDigit) else {
        throw CommandFailure.user("\"\(text)\" is not an asset id (64 hex digits, or a prefix of at least 4)")
    }
    let matches = Set(known.map(\.hex).filter { $0.hasPrefix(lowered) })
    guard let first = matches.first else { throw CommandFailure.user("no asset \(text) in \(bundle)") }
    guard matches.count == 1 else {
        throw CommandFailure.user("asset prefix \(text) is ambiguous in \(bundle): \(matches.sorted().map { String($0.prefix(12)) }.joined(separator: ", "))")
    }
    return try AssetID(hex: first)
}
