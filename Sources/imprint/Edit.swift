import ArgumentParser
import Foundation
import ImprintStore

/// `imprint edit <bundle> (--insert <pos> <text> | --delete <pos> <count> | --set k=v |
/// --replace-with <file>)`: one edit, durable in this device's log on exit.
struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Edit the document: one change, durable when the command returns.",
        discussion: "Positions and counts are in Unicode code points. Use -- before a text that starts with '-'."
    )

    @Argument(help: "The bundle.") var bundle: String
    @Argument(help: "The text for --insert, or the count for --delete.") var operand: String?
    @Option(help: "Insert <operand> at this code-point position of the body.") var insert: Int?
    @Option(help: "Delete <operand> code points from this position of the body.") var delete: Int?
    @Option(help: "Set a metadata field of the root map: key=value.") var set: String?
    @Option(help: "Make the body equal to this file's text (minimal diff applied as splices).") var replaceWith: String?
    @Option(help: "The change message.") var message: String?
    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var options: DeviceOptions
    @OptionGroup var incomplete: IncompleteOptions

    func run() throws {
        let chosen = [insert != nil, delete != nil, set != nil, replaceWith != nil].filter { $0 }.count
        guard chosen == 1 else {
            throw CommandFailure.user("give exactly one of --insert, --delete, --set, --replace-with")
        }
        let doc = try incomplete.open(bundle, device: try options.resolve())
        var splices = 0
        if let position = insert {
            guard let text = operand else { throw CommandFailure.user("--insert needs a position and a text") }
            try doc.insert(text, at: position, message: message)
            splices = 1
        } else if let position = delete {
            guard let operand else { throw CommandFailure.user("--delete needs a position and a count") }
            guard let count = Int(operand), count >= 0 else { throw CommandFailure.user("count must be a non-negative integer, got \"\(operand)\"") }
            try doc.delete(at: position, count: count, message: message)
            splices = 1
        } else if let assignment = set {
            guard operand == nil else { throw CommandFailure.user("unexpected argument \"\(operand!)\"") }
            guard let equals = assignment.firstIndex(of: "=") else { throw CommandFailure.user("--set takes key=value") }
            try doc.set(String(assignment[..<equals]), to: String(assignment[assignment.index(after: equals)...]), message: message)
        } else if let file = replaceWith {
            guard operand == nil else { throw CommandFailure.user("unexpected argument \"\(operand!)\"") }
            guard let data = FileManager.default.contents(atPath: file) else { throw CommandFailure.user("cannot read \(file)") }
            guard let text = String(data: data, encoding: .utf8) else { throw CommandFailure.user("\(file) is not UTF-8 text") }
            splices = try doc.replaceBody(with: text, message: message).count
        }
        let heads = doc.document.currentHeads.map(\.hex).sorted()
        if json {
            printJSON(["heads": .array(heads.map(JSON.string)), "splices": .int(splices), "length": .int(try doc.text().unicodeScalars.count)])
        }
    }
}
