import ArgumentParser
import Foundation
import ImprintDelivery
import ImprintKeys
import ImprintSync

/// `imprint identity create|show`: the device identity of a home (a did:key; its Ed25519 key
/// signs service tokens and MLS messages).
struct Identity: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or show this home's identity (did:key), and where its records go.",
        subcommands: [IdentityCreate.self, IdentityShow.self, IdentityStorage.self])
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

/// `imprint identity storage set|show`: where this identity's records go (`registerStorage`).
struct IdentityStorage: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage", abstract: "Choose or show where this identity's records are delivered.",
        subcommands: [IdentityStorageSet.self, IdentityStorageShow.self])
}

/// `imprint identity storage set zone-http [--endpoint URL]`.
struct IdentityStorageSet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Register where this identity's records go.",
        discussion: """
            zone-http with --endpoint URL keeps this identity's inbox on that zone server (an \
            imprint-server of your own): senders save a copy of every message of every shared \
            document there, presenting a write capability only the group's current members can \
            derive, and this identity reads its inbox first. zone-http without --endpoint goes back \
            to the default (the documents' own server). Registered with the server (--server, else \
            $IMPRINT_SERVER) and remembered in the home.
            """)

    @OptionGroup var account: AccountOptions
    @Argument(help: "The storage type (zone-http).") var type: String
    @Option(help: "The zone server's base URL, e.g. https://zones.example.") var endpoint: String?
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let sync = try account.account()
        let provider = StorageProvider(type: type, endpoint: endpoint)
        let registered = try runBlocking { try await sync.registerStorage(provider) }.storage ?? provider
        if json {
            printJSON(IdentityStorageShow.describe(registered, did: sync.did))
        } else if let endpoint = registered.endpoint {
            print("records for \(sync.did) now go to its inbox on \(endpoint) (registered with \(sync.serverURL))")
        } else {
            print("records for \(sync.did) now go to the documents' own server")
        }
    }
}

/// `imprint identity storage show [--json]`.
struct IdentityStorageShow: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show where this identity's records go.")

    @OptionGroup var account: AccountOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let did = try account.keyStore().deviceIdentity().did.did
        let registered = try SyncAccount.registeredStorage(in: account.resolvedHome) ?? StorageProvider.defaultProvider
        if json {
            printJSON(Self.describe(registered, did: did))
        } else if let endpoint = registered.endpoint {
            print("\(registered.type) \(endpoint) (inbox_\(did))")
        } else {
            print("\(registered.type) (the documents' own server)")
        }
    }

    static func describe(_ provider: StorageProvider, did: String) -> [String: JSON] {
        ["did": .string(did), "type": .string(provider.type), "endpoint": provider.endpoint.map { .string($0) } ?? .null,
         "inbox": .string("inbox_\(did)")]
    }
}
