import Foundation
import ImprintBundle
import ImprintStore

/// The folder-sync half of `imprint demo`: two simulated machines share a bundle through a
/// "sync tool" that copies files blindly and, on a collision, makes an iCloud-style
/// conflict copy (`notes 2.imprint`). Opening and syncing merges everything; no edit is lost.
enum FolderSyncDemo {
    static func run(_ report: DemoReport) throws {
        report.say("Folder sync: two machines, one shared folder, a conflict copy", heading: true)
        let fm = FileManager.default
        let root = fm.temporaryDirectory.appendingPathComponent("imprint-demo-\(UUID().uuidString.prefix(8))").path
        defer { try? fm.removeItem(atPath: root) }
        let laptopDir = "\(root)/laptop"
        let desktopDir = "\(root)/desktop"
        try fm.createDirectory(atPath: laptopDir, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: desktopDir, withIntermediateDirectories: true)
        let laptopID = try DeviceID("laptop")
        let desktopID = try DeviceID("desktop")

        let onLaptop = try DocumentBundle.create(at: "\(laptopDir)/notes.imprint", device: laptopID, title: "Notes")
        try onLaptop.insert("Buy milk.", at: 0)
        // The sync tool copies the new bundle to the desktop.
        try fm.copyItem(atPath: "\(laptopDir)/notes.imprint", toPath: "\(desktopDir)/notes.imprint")
        report.say("laptop created notes.imprint; the sync tool copied it to the desktop")

        // Both machines edit while the sync tool is offline.
        let onDesktop = try DocumentBundle.open(at: "\(desktopDir)/notes.imprint", device: desktopID)
        try onDesktop.insert(" Call Ana.", at: try onDesktop.text().unicodeScalars.count)
        try onLaptop.insert("Buy oat milk.", at: 0)
        try onLaptop.delete(at: 13, count: 9)
        report.say("laptop, offline:  \(try onLaptop.text().debugDescription)")
        report.say("desktop, offline: \(try onDesktop.text().debugDescription)")

        // Back online, the tool sees both bundles changed and keeps the desktop's as a copy.
        try fm.copyItem(atPath: "\(desktopDir)/notes.imprint", toPath: "\(laptopDir)/notes 2.imprint")
        report.say("the sync tool left a conflict copy on the laptop: \(try fm.contentsOfDirectory(atPath: laptopDir).sorted())")
        // A copy is removed only once it is wholly merged and has been quiet for the settle
        // period (5 s for `imprint sync`, 1 s here): a sync tool may still be writing it.
        let settle = SettlePolicy(quietPeriod: .seconds(1))
        let synced = try onLaptop.sync(settle: settle)
        report.say("laptop `imprint sync`: merged \(counted(synced.changesMerged, "change")); kept the copy: \(synced.kept.values.sorted().joined(separator: "; "))")
        report.say("laptop after sync: \(try onLaptop.text().debugDescription)")
        try report.check("conflict copy merged", synced.changesMerged > 0 && synced.removed.isEmpty,
                         "\(counted(synced.changesMerged, "change")) merged from notes 2.imprint; the copy kept while it may still be written")
        Thread.sleep(forTimeInterval: 1.1)
        let settled = try onLaptop.sync(settle: settle)
        report.say("a second later it has settled: removed \(settled.removed.map { URL(fileURLWithPath: $0).lastPathComponent })")
        report.say("laptop folder now: \(try fm.contentsOfDirectory(atPath: laptopDir).sorted())")
        try report.check("settled copy removed", settled.removed.count == 1, "removed \(settled.removed.count) copy after the settle period")

        // The tool then copies the laptop's files (its own log included) to the desktop.
        try fm.removeItem(atPath: "\(desktopDir)/notes.imprint")
        try fm.copyItem(atPath: "\(laptopDir)/notes.imprint", toPath: "\(desktopDir)/notes.imprint")
        let desktopAgain = try DocumentBundle.open(at: "\(desktopDir)/notes.imprint", device: desktopID)
        report.say("desktop reopened:  \(try desktopAgain.text().debugDescription)")
        let same = try desktopAgain.text() == onLaptop.text()
        report.say("both machines agree and kept every edit: \(same)")
        try report.check("machines agree", same, "both read \(try onLaptop.text().debugDescription)")
    }
}
