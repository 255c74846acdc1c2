import AsyncHTTPClient
import Foundation
import ImprintBundle
import ImprintKeys
import ImprintServer
import ImprintStore
import ImprintSync
import ImprintZoneService
import Logging
import ServiceLifecycle

/// The co-editing part of `imprint demo`: a Delivery Service and zone service started in
/// this process on loopback (SQLite and asset files in a temporary directory), three people
/// with homes of their own sharing one document end-to-end encrypted, one of them offline for
/// a while, then removed; and a look at what the server stored.
enum CoEditingDemo {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run() throws {
        print("")
        print("== Co-editing: three people, one server that reads nothing, a removal ==")
        try runBlocking { try await walkThrough() }
    }

    static func walkThrough() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-demo-coedit-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root + "/server", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var logger = Logger(label: "imprint-demo-server")
        logger.logLevel = .critical
        let store = try await StoreFactory.open(.sqlite(path: root + "/server/delivery.sqlite"), logger: logger)
        let zones = try await ZoneService.open(delivery: store, dataDirectory: URL(fileURLWithPath: root + "/server", isDirectory: true),
                                               configuration: ZoneServiceConfiguration())
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = DeliveryServer.makeApplication(
            store: store, configuration: DeliveryServerConfiguration(serviceDID: "did:web:demo.local", host: "127.0.0.1", port: 0),
            logger: logger, services: [zones]) { port in
                portSink.yield(port)
                portSink.finish()
            }
        let group = ServiceGroup(configuration: .init(services: [.init(service: app)], logger: logger))
        let server = Task { try await group.run() }
        defer { server.cancel() }
        var portIterator = ports.makeAsyncIterator()
        guard let port = await portIterator.next() else { throw Failure(description: "the demo server did not start") }
        let url = "http://127.0.0.1:\(port)"
        print("server:                   Delivery Service + zone service on \(url) (SQLite, in this process)")

        func person(_ name: String) async throws -> (account: SyncAccount, device: DeviceID, bundle: String) {
            let home = ImprintHome(path: root + "/home-\(name)")
            try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
            let account = try await SyncAccount.connect(home: home, keyStore: try home.openKeyStore(passphrase: nil), serverURL: url)
            try await account.topUpKeyPackages()
            return (account, try DeviceID(name), root + "/\(name).imprint")
        }
        let ada = try await person("ada"), ben = try await person("ben"), cy = try await person("cy")
        print("identities:               ada, ben, cy (did:key each, key packages published)")

        let secret = "Quarterly plan: ship the encrypted editor"
        let created = try DocumentBundle.create(at: ada.bundle, device: ada.device, title: "Plan")
        try created.insert(secret + ".", at: 0)
        let adaDoc = try await SharedDocument.share(bundleAt: ada.bundle, device: ada.device, account: ada.account)
        try await adaDoc.invite([ben.account.did, cy.account.did])
        let benDoc = try await SharedDocument.join(convoId: adaDoc.convoId, account: ben.account, bundleAt: ben.bundle, device: ben.device)
        let cyDoc = try await SharedDocument.join(convoId: adaDoc.convoId, account: cy.account, bundleAt: cy.bundle, device: cy.device)
        print("shared and joined:        convo \(adaDoc.convoId.prefix(12))…, epoch \(try await adaDoc.members().epoch), 3 members")

        // Concurrent edits; Cy is offline for a while and edits anyway.
        try await adaDoc.edit { try $0.insert(" Ada: draft the launch note.", at: try $0.text().count) }
        try await benDoc.edit { try $0.insert("[Ben] ", at: 0) }
        try await cyDoc.edit { try $0.insert(" Cy (offline): check the numbers.", at: try $0.text().count) }
        try await adaDoc.push()
        try await benDoc.push()
        try await adaDoc.pull()
        try await benDoc.pull()
        print("ada and ben, online:      \(try await adaDoc.text().debugDescription)")
        try await cyDoc.pull() // back online: catches up, then sends what it wrote offline
        try await cyDoc.push()
        for doc in [adaDoc, benDoc] { try await doc.pull() }
        let texts = [try await adaDoc.text(), try await benDoc.text(), try await cyDoc.text()]
        guard Set(texts).count == 1 else { throw Failure(description: "the three copies differ: \(texts)") }
        print("cy back online, merged:   \(texts[0].debugDescription) (same on all three)")

        // Cy is removed; what follows is unreadable to Cy and the servers refuse Cy.
        try await adaDoc.remove(cy.account.did)
        try await adaDoc.edit { try $0.insert(" (Cy has moved on.)", at: try $0.text().count) }
        try await adaDoc.push()
        try await benDoc.pull()
        var refused = false
        do {
            try await cyDoc.pull()
        } catch let error as SyncError where error.code == .removed {
            refused = true
        }
        let cyText = try await cyDoc.text()
        guard refused, !cyText.contains("moved on"), try await benDoc.text().contains("moved on") else {
            throw Failure(description: "the removed member was not cut off")
        }
        print("cy removed:               ben reads the next edit; cy is refused and its copy stops at the removal")

        // What the server holds: search every byte it stored for the document's words.
        let needle = Array("ship the encrypted editor".utf8)
        var files = 0, bytes = 0, found = false
        if let walker = FileManager.default.enumerator(atPath: root + "/server") {
            while let relative = walker.nextObject() as? String {
                guard let data = FileManager.default.contents(atPath: root + "/server/" + relative) else { continue }
                files += 1
                bytes += data.count
                if data.range(of: Data(needle)) != nil { found = true }
            }
        }
        guard !found else { throw Failure(description: "the server stored the document's words in plaintext") }
        print("server stored:            \(bytes) bytes in \(files) files; the words \"ship the encrypted editor\" appear in none")

        await group.triggerGracefulShutdown()
        try await server.value
        try await zones.shutdown()
        try await store.shutdown()
    }
}
