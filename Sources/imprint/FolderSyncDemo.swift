import Foundation
import ImprintBundle
import ImprintStore

/// The folder-sync half of `imprint demo`: two simulated machines share a bundle through a
/// "sync tool" that copies files blindly and, on a collision, makes an iCloud-style
/// conflict copy (`notes 2.imprint`). Opening and syncing merges everything; no edit is lost.
enum FolderSyncDemo {
    static func run() throws {
        print("")
        print("== Folder sync: two machines, one shared folder, a conflict copy ==")
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
        print("laptop created notes.imprint; the sync tool copied it to the desktop")

        // Both machines edit while the sync tool is offline.
        let onDesktop = try DocumentBundle.open(at: "\(desktopDir)/notes.imprint", device: desktopID)
        try onDesktop.insert(" Call Ana.", at: try onDesktop.text().unicodeScalars.count)
        try onLaptop.insert("Buy oat milk.", at: 0)
        try onLaptop.delete(at: 13, count: 9)
        print("laptop, offline:  \(try onLaptop.text().debugDescription)")
        print("desktop, offline: \(try onDesktop.text().debugDescription)")

        // Back online, the tool sees both bundles changed and keeps the desktop's as a copy.
        try fm.copyItem(atPath: "\(desktopDir)/notes.imprint", toPath: "\(laptopDir)/notes 2.imprint")
        print("the sync tool left a conflict copy on the laptop: \(try fm.contentsOfDirectory(atPath: laptopDir).sorted())")
        // A copy is removed only once it is wholly merged and has been quiet for the settle
        // period (5 s for `imprint sync`, 1 s here): a sync tool may still be writing it.
        let settle = SettlePolicy(quietPeriod: .seconds(1))
        let report = try onLaptop.sync(settle: settle)
        print("laptop `imprint sync`: merged \(counted(report.changesMerged, "change")); kept the copy: \(report.kept.values.sorted().joined(separator: "; "))")
        print("laptop after sync: \(try onLaptop.text().debugDescription)")
        Thread.sleep(forTimeInterval: 1.1)
        let settled = try onLaptop.sync(settle: settle)
        print("a second later it has settled: removed \(settled.removed.map { URL(fileURLWithPath: $0).lastPathComponent })")
        print("laptop folder now: \(try fm.contentsOfDirectory(atPath: laptopDir).sorted())")
        guard report.removed.isEmpty, settled.removed.count == 1 else { throw DemoFailure() }

        // The tool then copies the laptop's files (its own log included) to the desktop.
        try fm.removeItem(atPath: "\(desktopDir)/notes.imprint")
        try fm.copyItem(atPath: "\(laptopDir)/notes.imprint", toPath: "\(desktopDir)/notes.imprint")
        let desktopAgain = try DocumentBundle.open(at: "\(desktopDir)/notes.imprint", device: desktopID)
        print("desktop reopened:  \(try desktopAgain.text().debugDescription)")
        let same = try desktopAgain.text() == onLaptop.text()
        print("both machines agree and kept every edit: \(same)")
        guard same else { throw DemoFailure() }
    }

    struct DemoFailure: Error {}
}
