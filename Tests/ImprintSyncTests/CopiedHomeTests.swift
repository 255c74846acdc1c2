import Foundation
import ImprintServerTestSupport
import ImprintKeys
import ImprintStore
import ImprintSync
import Testing

/// A home copied to another machine (or restored from a backup) holds the same MLS state as
/// the original: both could encrypt with one generation. A copy that sees a message of its
/// own DID that it did not send stops sending.
extension SyncSuites {
@Suite struct CopiedHomeTests {
    @Test func aCopySeeingAnotherCopysMessageStopsSending() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "one identity")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            _ = try await bob.join(aliceDoc.convoId)
            // The whole home and the bundle are copied to a second machine.
            let copyHome = server.directory.file("people/home-alice-copy"), copyBundle = server.directory.file("people/alice-copy.imprint")
            try FileManager.default.copyItem(atPath: alice.account.home.path, toPath: copyHome)
            try FileManager.default.copyItem(atPath: alice.bundlePath, toPath: copyBundle)
            let copyHomeValue = ImprintHome(path: copyHome)
            let copyAccount = try await SyncAccount.connect(home: copyHomeValue, keyStore: try copyHomeValue.openKeyStore(passphrase: nil),
                                                            serverURL: server.server.baseURL, httpClient: TestHTTP.client)
            let copy = try await SharedDocument.open(bundleAt: copyBundle, device: alice.device, account: copyAccount)
            try await copy.edit { try $0.insert("copy: ", at: 0) }
            try await copy.push()

            // The original learns of it on its next pull and refuses to send.
            try await aliceDoc.pull()
            try alice.edit { try $0.insert("original: ", at: 0) }
            await #expect(throws: SyncError(.staleState, "")) { try await aliceDoc.push() }
            let status = await aliceDoc.status()
            #expect(status.stale?.contains("another copy") == true)
        }
    }
}
}
