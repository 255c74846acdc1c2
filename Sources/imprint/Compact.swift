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
    @Option(name: .customLong("renew-away-days"),
            help: "First remove and add again, with a fresh Welcome, members not seen for this many days who hold compaction back (admins).")
    var renewAwayDays: Double?

    func validate() throws {
        if let renewAwayDays, !(renewAwayDays >= 0 && renewAwayDays.isFinite) {
            throw ValidationError("--renew-away-days must be a number of days, 0 or more")
        }
    }

    func run() throws {
        let window = renewAwayDays.map { Duration.seconds($0 * 86_400) }
        let report = try options.withDocument { doc, _ in try await doc.compact(renewingMembersAwayFor: window) }
        let slowest = report.cursors.cursors.min { $0.processedSeq < $1.processedSeq }
        if options.json {
            printJSON([
                "snapshotSeq": .int(report.snapshotSeq),
                "acknowledgedSeq": .int(report.acknowledgedSeq),
                "compactedBefore": report.zone?.compactedBefore.map { JSON.int($0) } ?? .null,
                "deletedRecords": .int(report.zone?.deletedRecords ?? 0),
                "freedBytes": .int(report.zone?.freedBytes ?? 0),
                "firstKeptSeq": .int(report.cursors.firstKeptSeq),
                "renewed": .array(report.renewal.renewed.map { .string($0) }),
                "cursors": .array(report.cursors.cursors.map { cursor in
                    .object(["did": .string(cursor.did), "processedSeq": .int(cursor.processedSeq)])
                }),
            ])
            return
        }
        for member in report.renewal.renewed { print("renewed \(member): removed and added again with a fresh Welcome") }
        for member in report.renewal.withoutKeyPackage { print("left \(member) in place: no key package to add it again with") }
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
