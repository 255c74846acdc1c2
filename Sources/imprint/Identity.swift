import ArgumentParser
import Foundation
import ImprintKeys
import ImprintSync

/// `imprint identity create|show`: the device identity of a home (a did:key; its Ed25519 key
/// signs service tokens and MLS messages).
struct Identity: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or show this home's identity (did:key).",
        subcommands: [IdentityCreate.self, IdentityShow.self])
}

/// `imprint identity create [--passphrase-file F]`: creates the identity (once per home) and
/// publishes key packages when a server is known.
struct IdentityCreate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create the identity; publish key packages if a server is known.")

    @OptionGroup var account: AccountOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let store = try account.keyStore(create: true)
        let did = try store.deviceIdentity().did.did
        var published = 0
        if account.serverURL() != nil {
            let sync = try account.account()
            published = try runBlocking { try await sync.topUpKeyPackages() }
        }
        if json {
            printJSON(["did": .string(did), "home": .string(account.resolvedHome.path), "keyPackagesPublished": .int(published)])
        } else {
            if published > 0 { print("published \(published) key packages to \(account.serverURL()!)") }
            print(did)
        }
    }
}

/// `imprint identity show [--json]`: the DID alone on the last line.
struct IdentityShow: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print the identity's DID.")

    @OptionGroup var account: AccountOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let store = try account.keyStore()
        let did = try store.deviceIdentity().did.did
        if json {
            let unused = try store.keyPackageReferences(for: store.deviceIdentity().did).count
            printJSON(["did": .string(did), "home": .string(account.resolvedHome.path), "unusedKeyPackages": .int(unused)])
        } else {
            print(did)
        }
    }
}
