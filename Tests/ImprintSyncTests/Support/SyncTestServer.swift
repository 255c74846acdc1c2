import Foundation
import ImprintBundle
import ImprintDelivery
import ImprintKeys
import ImprintServer
import ImprintServerTestSupport
import ImprintStore
import ImprintSync
import ImprintTestSupport
import ImprintZones
import ImprintZoneService

/// A real server (Delivery Service and zone service on one store of `kind`) on loopback, and
/// the people who use it: each with a home of their own (a real SQLite key store), a device
/// and a bundle path.
struct SyncTestServer: Sendable {
    let server: RunningServer
    let directory: TemporaryDirectory
    /// Where the server keeps its data: the SQLite database (with its WAL) or the PostgreSQL
    /// database, and the zone service's asset files.
    let database: DatabaseLocation
    var zoneData: String { directory.file("server/zones") }
    /// Everything the server wrote (for scans): its database files and its zone assets.
    var serverData: String { directory.file("server") }

    /// Runs `body` against a fresh server of `kind` and always stops it.
    /// The server compacts zones by itself every `compactionInterval` (nil: only on request,
    /// so that tests decide when).
    static func with<T>(_ kind: StoreKind, compactionInterval: Duration? = nil, _ body: (SyncTestServer) async throws -> T) async throws -> T {
        let directory = TemporaryDirectory("sync")
        for sub in ["server", "people"] { try FileManager.default.createDirectory(atPath: directory.file(sub), withIntermediateDirectories: true) }
        let database: DatabaseLocation
        switch kind {
        case .sqlite: database = .sqlite(path: directory.file("server/delivery.sqlite"))
        case .postgres: database = .postgres(try await PostgresTestDatabase.create())
        }
        let store = try await StoreFactory.open(database, logger: testLogger)
        var configuration = ZoneServiceConfiguration()
        configuration.compactionInterval = compactionInterval
        let zones = try await ZoneService.open(delivery: store, dataDirectory: URL(fileURLWithPath: directory.file("server/zones")),
                                               configuration: configuration, heartbeat: .seconds(1))
        let server = try await RunningServer.start(store: store, services: [zones])
        do {
            let result = try await body(SyncTestServer(server: server, directory: directory, database: database))
            try await server.stop()
            return result
        } catch {
            try? await server.stop()
            throw error
        }
    }

    /// A new person named `name`: identity created, key packages published. Unless `options`
    /// says otherwise, a push waits for its inbox copies for up to two minutes instead of two
    /// seconds (tests look into inboxes right after pushing), and a request to the server may
    /// take as long as other tests' (`TestHTTP.requestTimeout`): the machine may be loaded.
    func person(_ name: String, options: SyncOptions = SyncOptions()) async throws -> Person {
        var options = options
        if options.inboxCopyWait == SyncOptions().inboxCopyWait { options.inboxCopyWait = .seconds(120) }
        if options.requestTimeout == nil { options.requestTimeout = .seconds(TestHTTP.requestTimeout.nanoseconds / 1_000_000_000) }
        let home = ImprintHome(path: directory.file("people/home-\(name)"))
        try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
        let store = try home.openKeyStore(passphrase: nil)
        let account = try await SyncAccount.connect(home: home, keyStore: store, serverURL: server.baseURL,
                                                    httpClient: TestHTTP.client, options: options)
        try await account.topUpKeyPackages()
        return Person(name: name, account: account, device: try DeviceID(name), bundlePath: directory.file("people/\(name).imprint"))
    }

    /// A copy of `person` as their disk is now (home, key store and bundle copied to new
    /// paths): the same identity and group state, for playing a process of theirs whose
    /// writes are then lost (delete `copy.bundlePath`'s directory and the home with it).
    func copy(of person: Person, as name: String) async throws -> Person {
        let copy = ImprintHome(path: directory.file("people/home-\(name)"))
        let fileManager = FileManager.default
        try fileManager.copyItem(atPath: person.account.home.path, toPath: copy.path)
        let bundlePath = directory.file("people/\(name).imprint")
        try fileManager.copyItem(atPath: person.bundlePath, toPath: bundlePath)
        let account = try await SyncAccount.connect(home: copy, keyStore: try copy.openKeyStore(passphrase: nil), serverURL: server.baseURL,
                                                    httpClient: TestHTTP.client, options: person.account.options)
        return Person(name: name, account: account, device: person.device, bundlePath: bundlePath)
    }
}

/// One person of a test: an account (identity, key store, clients) and where their copy lives.
struct Person: Sendable {
    let name: String
    let account: SyncAccount
    let device: DeviceID
    let bundlePath: String

    var did: String { account.did }

    /// Creates their bundle with `text` as the body.
    func createBundle(title: String = "Draft", text: String) throws {
        let bundle = try DocumentBundle.create(at: bundlePath, device: device, title: title)
        if !text.isEmpty { try bundle.insert(text, at: 0) }
    }

    /// Edits their bundle as another process would (the open SharedDocument picks it up on push).
    func edit(_ body: (DocumentBundle) throws -> Void) throws {
        let bundle = try DocumentBundle.open(at: bundlePath, device: device)
        try body(bundle)
    }

    func share() async throws -> SharedDocument {
        try await SharedDocument.share(bundleAt: bundlePath, device: device, account: account)
    }

    func join(_ convoId: String) async throws -> SharedDocument {
        try await SharedDocument.join(convoId: convoId, account: account, bundleAt: bundlePath, device: device)
    }

    func open() async throws -> SharedDocument {
        try await SharedDocument.open(bundleAt: bundlePath, device: device, account: account)
    }

    /// The live records of zone `zoneId` as this person reads them, every page; none when the
    /// zone does not exist.
    func liveRecords(in zoneId: String) async throws -> [ImprintZones.ZoneRecord] {
        var records: [ImprintZones.ZoneRecord] = []
        var token: ZoneChangeToken?
        while true {
            let batch: ZoneChangeBatch
            do {
                batch = try await account.zones.fetchChanges(zoneId: zoneId, since: token, limit: 1000)
            } catch let error as ZoneError where error.code == .zoneNotFound {
                return []
            } catch let error as ZoneError where error.code == .changeTokenExpired && token != nil {
                // The server compacted the zone between two pages: read it again from the start.
                (records, token) = ([], nil)
                continue
            }
            records += batch.records.filter { !$0.deleted }
            token = batch.changeToken
            if !batch.moreComing { return records }
        }
    }

    /// The body text of their bundle as a fresh reader sees it.
    func text() throws -> String {
        try DocumentBundle.open(at: bundlePath, device: device).text()
    }
}
