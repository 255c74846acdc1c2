import ArgumentParser
import Foundation
import ImprintKeys
import ImprintSync

/// Where a sharing command finds its identity and server: `--home` (default `$IMPRINT_HOME`,
/// else `~/.imprint`), `--passphrase-file` for a home whose key store is locked by a
/// passphrase, `--server` (default: the bundle's, else `$IMPRINT_SERVER`).
struct AccountOptions: ParsableArguments {
    @Option(name: .long, help: "The identity's home directory (default: $IMPRINT_HOME, else ~/.imprint).")
    var home: String?
    @Option(name: .long, help: "A file holding the key store's passphrase (for a home created with one).")
    var passphraseFile: String?
    @Option(name: .long, help: "The server's base URL (default: the bundle's, else $IMPRINT_SERVER).")
    var server: String?

    var resolvedHome: ImprintHome {
        if let home, !home.isEmpty { return ImprintHome(path: home) }
        return ImprintHome.current()
    }

    func passphrase() throws -> String? {
        guard let passphraseFile else { return nil }
        guard let data = FileManager.default.contents(atPath: passphraseFile),
              let text = String(data: data, encoding: .utf8) else {
            throw CommandFailure.user("cannot read the passphrase file \(passphraseFile)")
        }
        let passphrase = text.trimmingCharacters(in: .newlines)
        guard !passphrase.isEmpty else { throw CommandFailure.user("the passphrase file \(passphraseFile) is empty") }
        return passphrase
    }

    /// The home's key store; `create` makes the home when it is missing.
    func keyStore(create: Bool = false) throws -> SQLiteKeyStore {
        let home = resolvedHome
        let exists = FileManager.default.fileExists(atPath: home.keyStorePath)
        guard exists || create else {
            throw CommandFailure.user("no identity in \(home.path); run `imprint identity create` first")
        }
        do {
            try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CommandFailure.user("cannot create \(home.path): \(error.localizedDescription)")
        }
        return try home.openKeyStore(passphrase: passphrase())
    }

    /// The server URL: `--server`, else `fallback` (the bundle's), else `$IMPRINT_SERVER`.
    func serverURL(fallback: String? = nil) -> String? {
        if let server, !server.isEmpty { return server }
        if let fallback { return fallback }
        if let env = ProcessInfo.processInfo.environment["IMPRINT_SERVER"], !env.isEmpty { return env }
        return nil
    }

    /// The account on the server (`fallback` = the bundle's server).
    func account(fallback: String? = nil) throws -> SyncAccount {
        guard let url = serverURL(fallback: fallback) else {
            throw CommandFailure.user("no server: pass --server URL or set IMPRINT_SERVER")
        }
        let store = try keyStore()
        let home = resolvedHome
        return try runBlocking { try await SyncAccount.connect(home: home, keyStore: store, serverURL: url) }
    }

    /// The account for a shared bundle (its server unless `--server` says otherwise).
    func account(forBundle path: String) throws -> SyncAccount {
        let link = try SharedDocument.link(ofBundleAt: path)
        guard let link else { throw CommandFailure.user("\(path) is not shared; run `imprint share \(path) --server URL` first") }
        return try account(fallback: link.server)
    }
}
