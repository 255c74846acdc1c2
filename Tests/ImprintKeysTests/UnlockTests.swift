import Foundation
import ImprintKeys
import ImprintTestSupport
import Testing

@Suite struct UnlockTests {
    func fileBytes(_ dir: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: dir.file(name)))
        }
        return files
    }

    @Test func wrongPassphraseIsATypedErrorAndChangesNothing() throws {
        let dir = TemporaryDirectory("keys-unlock")
        let path = dir.file("keys.sqlite")
        do {
            let store = try SQLiteKeyStore(path: path, unlock: .passphrase("right", parameters: .testing))
            let me = try store.deviceIdentity().did
            try store.saveEpochSecret([1, 2, 3], convo: "c", epoch: 1, for: me)
        }
        let before = try fileBytes(dir)
        let error = #expect(throws: KeyStoreError.wrongPassphrase) {
            try SQLiteKeyStore(path: path, unlock: .passphrase("wrong", parameters: .testing))
        }
        #expect(error?.description.contains("does not unlock") == true)
        #expect(throws: KeyStoreError.wrongPassphrase) { try SQLiteKeyStore(path: path, unlock: .keyFile(path: dir.file("k"))) }
        #expect(try fileBytes(dir) == before)
        let store = try SQLiteKeyStore(path: path, unlock: .passphrase("right", parameters: .owasp))
        let me = try store.deviceIdentity().did
        #expect(try store.epochSecret(convo: "c", epoch: 1, for: me) == [1, 2, 3])
    }

    @Test func keyFileIsPrivateAndAnotherKeyFileDoesNotUnlock() throws {
        let dir = TemporaryDirectory("keys-unlock")
        let path = dir.file("keys.sqlite"), keyPath = dir.file("keys.key")
        _ = try SQLiteKeyStore(path: path, unlock: .keyFile(path: keyPath)).deviceIdentity()
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let storeAttributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((storeAttributes[.posixPermissions] as? Int) == 0o600)

        #expect(throws: KeyStoreError.wrongPassphrase) { try SQLiteKeyStore(path: path, unlock: .keyFile(path: dir.file("other.key"))) }
        #expect(throws: KeyStoreError.wrongPassphrase) { try SQLiteKeyStore(path: path, unlock: .passphrase("x", parameters: .testing)) }

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyPath)
        #expect(throws: KeyStoreError.keyFileExposed) { try SQLiteKeyStore(path: path, unlock: .keyFile(path: keyPath)) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir.file("short.key")))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: dir.file("short.key"))
        #expect(throws: KeyStoreError.corrupt) { try SQLiteKeyStore(path: path, unlock: .keyFile(path: dir.file("short.key"))) }
        #expect(try SQLiteKeyStore(path: path, unlock: .keyFile(path: keyPath)).identities().count == 1)
    }

    @Test func aFileThatIsNotAStoreIsRefused() throws {
        let dir = TemporaryDirectory("keys-unlock")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: dir.file("junk.sqlite")))
        #expect(throws: KeyStoreError.self) { try SQLiteKeyStore(path: dir.file("junk.sqlite"), unlock: .passphrase("x", parameters: .testing)) }
    }
}
