import ArgumentParser
import Foundation
import ImprintSync

/// `imprint leave <bundle>`: sends what is unsent, leaves, deletes this identity's keys for it.
struct Leave: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Leave a shared document (the bundle stays).")

    @OptionGroup var options: SharedBundleOptions

    func run() throws {
        let convo = try options.withDocument { doc, _ in
            try await doc.leave()
            return doc.convoId
        }
        if options.json { printJSON(["left": .string(convo)]) } else { print("left \(convo); \(options.bundle) keeps what was received") }
    }
}
