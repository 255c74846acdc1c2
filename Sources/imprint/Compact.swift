import ArgumentParser
import Foundation
import ImprintSync

/// `imprint compact <bundle>`: epoch-tied compaction on demand.
struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a snapshot and let the servers drop the change sets every member has passed.",
        discussion: """
            Sends an encrypted snapshot of the whole document (a checkpoint), then asks the zone \
            service to delete the change sets below the newest checkpoint that every member has \
            processed. The slowest member decides how far that goes; the server compacts again by \
            itself once the others have caught up. No edit is lost: the snapshot holds the full history.
            """)

    @OptionGroup var options: SharedBundleOptions

    func run() throws {
        let report = try options.withDocument { doc, _ in try await doc.compact() }
        let slowest = report.cursors.cursors.min { $0.processedSeq < $1.processedSeq }
        if options.json {
            printJSON([
                "snapshotSeq": .int(report.snapshotSeq),
                "acknowledgedSeq": .int(report.acknowledgedSeq),
                "compactedBefore": report.zone?.compactedBefore.map { JSON.int($0) } ?? .null,
                "deletedRecords": .int(report.zone?.deletedRecords ?? 0),
                "freedBytes": .int(report.zone?.freedBytes ?? 0),
                "firstKeptSeq": .int(report.cursors.firstKeptSeq),
                "cursors": .array(report.cursors.cursors.map { cursor in
                    .object(["did": .string(cursor.did), "processedSeq": .int(cursor.processedSeq)])
                }),
            ])
            return
        }
        print("sent snapshot seq \(report.snapshotSeq) as a checkpoint")
        if let zone = report.zone, zone.deletedRecords > 0 {
            print("deleted \(zone.deletedRecords) record\(zone.deletedRecords == 1 ? "" : "s") below seq \(zone.compactedBefore ?? 0) (\(zone.freedBytes) bytes freed)")
        } else {
            print("nothing to delete yet")
        }
        if let slowest, slowest.processedSeq < report.snapshotSeq {
            print("waiting for \(slowest.did) (processed up to seq \(slowest.processedSeq)) before the rest can go")
        }
    }
}
