// Folder sync: one document kept on two machines through a shared folder (iCloud Drive,
// Dropbox, Syncthing). Here the "sync tool" is FileManager copying files; it makes a
// conflict copy when both machines changed the bundle, as real tools do. Opening and syncing
// merges everything, and no edit is lost.
//
//     swift run sample-folder-sync
import Foundation
import ImprintBundle
import ImprintStore

let root = FileManager.default.temporaryDirectory.appendingPathComponent("folder-sync-sample-\(UUID().uuidString.prefix(8))").path
let laptopFolder = root + "/laptop", desktopFolder = root + "/desktop"
try FileManager.default.createDirectory(atPath: laptopFolder, withIntermediateDirectories: true)
try FileManager.default.createDirectory(atPath: desktopFolder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }

// Each machine writes as its own device: its own log inside the bundle.
let laptop = try DocumentBundle.create(at: laptopFolder + "/notes.imprint", device: try DeviceID("laptop"), title: "Notes")
try laptop.insert("Buy milk.", at: 0)
try FileManager.default.copyItem(atPath: laptopFolder + "/notes.imprint", toPath: desktopFolder + "/notes.imprint")

// Both edit while the sync tool is offline.
let desktop = try DocumentBundle.open(at: desktopFolder + "/notes.imprint", device: try DeviceID("desktop"))
try desktop.insert(" Call Ana.", at: try desktop.text().unicodeScalars.count)
try laptop.insert("oat ", at: 4)
print("laptop:  \(try laptop.text())")
print("desktop: \(try desktop.text())")

// The tool finds both changed and keeps the desktop's bundle as a conflict copy.
try FileManager.default.copyItem(atPath: desktopFolder + "/notes.imprint", toPath: laptopFolder + "/notes 2.imprint")

// `sync` merges every log and conflict copy; a copy is deleted only once it is wholly merged
// and has been quiet for the settle period (a sync tool may still be writing it).
let settle = SettlePolicy(quietPeriod: .milliseconds(500))
let first = try laptop.sync(settle: settle)
print("merged \(first.changesMerged) change(s) from the conflict copy: \(try laptop.text())")
Thread.sleep(forTimeInterval: 0.6)
let second = try laptop.sync(settle: settle)
print("removed once settled: \(second.removed.map { URL(fileURLWithPath: $0).lastPathComponent })")

// The tool copies the laptop's bundle back; the desktop reads the same text.
try FileManager.default.removeItem(atPath: desktopFolder + "/notes.imprint")
try FileManager.default.copyItem(atPath: laptopFolder + "/notes.imprint", toPath: desktopFolder + "/notes.imprint")
let reopened = try DocumentBundle.open(at: desktopFolder + "/notes.imprint", device: try DeviceID("desktop"))
print("desktop: \(try reopened.text())")
let agree = try reopened.text() == laptop.text()
print("both machines agree: \(agree)")
if !agree { exit(1) }
