import Foundation
import GRDB
import ImprintKeys
import ImprintTestSupport
import Testing

@Suite struct ImprintHomeTests {
    @Test func oneDeviceIdentityPerHome() throws {
        let dir = TemporaryDirectory("keys-home")
        let home = ImprintHome.current(environment: ["IMPRINT_HOME": dir.file("home"), "HOME": "/nonexistent"])
        #expect(home.path == dir.file("home"))
        let first = try home.openKeyStore(passphrase: nil).deviceIdentity().did
        #expect(try home.openKeyStore(passphrase: nil).deviceIdentity().did == first)
        let other = try ImprintHome(path: dir.file("other")).openKeyStore(passphrase: "p", parameters: .testing).deviceIdentity().did
        #expect(other != first)
        #expect(ImprintHome.current(environment: ["HOME": "/users/ana"]).path == "/users/ana/.imprint")
    }

    @Test func aStoreFromANewerSchemaIsRefused() throws {
        let dir = TemporaryDirectory("keys-home")
        let home = ImprintHome(path: dir.path)
        _ = try home.openKeyStore(passphrase: nil).deviceIdentity()
        let queue = try DatabaseQueue(path: home.keyStorePath)
        try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v999-from-the-future')") }
        #expect(throws: KeyStoreError.unsupportedVersion) { try home.openKeyStore(passphrase: nil) }
    }
}
