import ArgumentParser
import Foundation
import ImprintBundle
import ImprintStore

/// `--allow-incomplete`: read or edit a document known to be incomplete (changes waiting for
/// changes that no file of the bundle holds, after damage or while files are still arriving).
/// Without it, `text`, `show`, `log` and `edit` refuse such a document with exit status 2,
/// so a partial view is never printed or edited as if it were the whole.
struct IncompleteOptions: ParsableArguments {
    @Flag(name: .customLong("allow-incomplete"), help: "Read or edit even when the document is known to be incomplete.")
    var allowIncomplete = false

    /// Opens the bundle, refusing a known-incomplete document unless allowed (then a warning).
    func open(_ bundle: String, device: DeviceID) throws -> DocumentBundle {
        let doc = try DocumentBundle.open(at: bundle, device: device)
        reportWarnings(doc)
        if let reason = doc.incompleteness {
            guard allowIncomplete else {
                throw CommandFailure(message: "incomplete: \(reason); what is here is only part of the document (pass --allow-incomplete to read or edit it anyway)", status: .data)
            }
            warnIncomplete(reason)
        }
        return doc
    }
}

/// One `warning: incomplete: …` line on stderr.
func warnIncomplete(_ reason: String) {
    FileHandle.standardError.write(Data("warning: incomplete: \(reason)\n".utf8))
}
