// Shared document: two people co-edit one document end-to-end encrypted through a server
// that stores only ciphertext (MLS-encrypted change sets in a shared zone, ordered by the
// Delivery Service); then one removes the other, who reads nothing after that.
//
//     swift build --product imprint-server && swift run sample-shared-document
//     swift run sample-shared-document http://127.0.0.1:8080     # a server you started
//
// Without a URL the sample starts `imprint-server` (built beside it) on a free loopback port
// with its data in a temporary directory, and stops it at the end.
import Foundation
import ImprintBundle
import ImprintKeys
import ImprintStore
import ImprintSync

let root = FileManager.default.temporaryDirectory.appendingPathComponent("shared-sample-\(UUID().uuidString.prefix(8))").path
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }

/// `imprint-server --port 0` beside this executable; returns the process and its URL.
func startServer() throws -> (Process, String) {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imprint-server").path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
        print("no imprint-server beside this sample: run `swift build --product imprint-server` first, or pass a server URL")
        exit(1)
    }
    let log = root + "/server.log"
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    let server = Process()
    server.executableURL = URL(fileURLWithPath: binary)
    server.arguments = ["--port", "0", "--data", root + "/server"]
    server.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    try server.run()
    for _ in 0..<200 {
        Thread.sleep(forTimeInterval: 0.05)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        if let range = text.range(of: #"listening on 127\.0\.0\.1:\d+"#, options: .regularExpression) {
            return (server, "http://" + text[range].dropFirst("listening on ".count))
        }
    }
    server.terminate()
    print("imprint-server did not start")
    exit(1)
}

let started = CommandLine.arguments.count > 1 ? nil : try startServer()
let url = CommandLine.arguments.dropFirst().first ?? started!.1
defer { started?.0.terminate() }

/// A person: a home (key store with a did:key identity) connected to the server.
func person(_ name: String) async throws -> (SyncAccount, DeviceID, String) {
    let home = ImprintHome(path: root + "/home-" + name)
    try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
    let account = try await SyncAccount.connect(home: home, keyStore: try home.openKeyStore(passphrase: nil), serverURL: url)
    _ = try await account.topUpKeyPackages()    // others can invite this identity now
    return (account, try DeviceID(name), root + "/\(name).imprint")
}

let (ada, adaDevice, adaPath) = try await person("ada")
let (ben, benDevice, benPath) = try await person("ben")

// Ada shares a document and invites Ben; Ben joins from the Welcome.
let draft = try DocumentBundle.create(at: adaPath, device: adaDevice, title: "Plan")
try draft.insert("Ship the editor.", at: 0)
let adaDoc = try await SharedDocument.share(bundleAt: adaPath, device: adaDevice, account: ada)
_ = try await adaDoc.invite([ben.did])
let benDoc = try await SharedDocument.join(convoId: adaDoc.convoId, account: ben, bundleAt: benPath, device: benDevice)
print("ben joined: \(try await benDoc.text())")

// Edits both ways: each push sends the changes since the last one, encrypted.
try await benDoc.edit { try $0.insert(" Ben: tests first.", at: try $0.text().unicodeScalars.count) }
_ = try await benDoc.push()
try await adaDoc.edit { try $0.insert("Plan: ", at: 0) }
_ = try await adaDoc.push()
_ = try await adaDoc.pull()
_ = try await benDoc.pull()
print("ada: \(try await adaDoc.text())")
print("ben: \(try await benDoc.text())")

// Ada removes Ben: a new epoch whose keys Ben never gets.
try await adaDoc.remove(ben.did)
try await adaDoc.edit { try $0.insert(" (Ben moved on.)", at: try $0.text().unicodeScalars.count) }
_ = try await adaDoc.push()
do {
    _ = try await benDoc.pull()
    print("ben pulled after removal: \(try await benDoc.text())")
} catch {
    print("ben after removal: \(error)")
}
print("ben's copy ends before the removal: \(try await !benDoc.text().contains("moved on"))")
