import Foundation
import ImprintDelivery
import ImprintFiles
import ImprintKeys
import ImprintZones

/// Where this identity wants its records delivered (`registerStorage`): its choice, kept in
/// the home as `storage.json` so that every shared document of the identity follows it.
///
/// Only `zone-http` is honoured: an endpoint is the base URL of a zone server (another
/// `imprint-server` than the documents' own, typically the member's), where the identity
/// keeps its inbox `inbox_<did>`. Senders save a copy of every message there, presenting the
/// inbox write capability of the group's current epoch (``InboxCapability``), and the member
/// reads its inbox first. Without an endpoint, records go to the documents' own server (the
/// default).
///
/// ```swift
/// let account = try await account.registerStorage(StorageProvider(type: "zone-http", endpoint: "https://zones.example"))
/// // shared documents opened with `account` now receive through https://zones.example
/// ```
enum StorageRegistration {
    static func path(home: String) -> String { home + "/storage.json" }

    /// The registered provider, or nil (the default: the documents' own server).
    static func load(home: String) throws(SyncError) -> StorageProvider? {
        let path = path(home: home)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try JSONDecoder.sync.decode(StorageProvider.self, from: Data(AtomicFile.read(path, limit: 64 << 10)))
        } catch {
            throw SyncError(.io, "\(path) is unreadable: \(error)")
        }
    }

    static func save(_ provider: StorageProvider, home: String) throws(SyncError) {
        do {
            try AtomicFile.write(Array(JSONEncoder.sync.encode(provider)), to: path(home: home), mode: 0o600)
        } catch {
            throw SyncError(.io, "cannot save the storage registration: \(error)")
        }
    }

    /// Checks that `provider` is one this client honours; returns it with its endpoint in
    /// canonical form (no trailing slash).
    static func validated(_ provider: StorageProvider) throws(SyncError) -> StorageProvider {
        guard provider.type == "zone-http" else {
            throw SyncError(.invalidArgument, "storage type \(provider.type) is not supported (only zone-http)")
        }
        var provider = provider
        if let endpoint = provider.endpoint {
            guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  url.host?.isEmpty == false, url.query == nil, url.fragment == nil else {
                throw SyncError(.invalidArgument, "storage endpoint \(endpoint) is not an http(s) base URL")
            }
            provider.endpoint = canonical(endpoint)
        }
        return provider
    }

    /// An endpoint or server URL without its trailing slashes, for comparing.
    static func canonical(_ url: String) -> String {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}

extension SyncAccount {
    /// Registers where this identity's records go: saves the choice in the home, creates the
    /// inbox at the endpoint (if it has one) and tells the Delivery Service, whose
    /// `sendMessage` then hands the choice to every sender (`recipients[].storage`). Returns
    /// the account with the choice in effect; documents opened with it follow it (they
    /// register the inbox write capability at their next push or pull).
    ///
    /// `StorageProvider(type: "zone-http")` goes back to the default. Throws
    /// ``SyncError/Code/invalidArgument`` for a type other than `zone-http` or a malformed
    /// endpoint, and the zone server's error when the endpoint cannot be reached.
    public func registerStorage(_ provider: StorageProvider) async throws -> SyncAccount {
        let provider = try StorageRegistration.validated(provider)
        if let endpoint = provider.endpoint {
            let zones = try await endpoints.store(at: endpoint)
            do {
                _ = try await zones.createZone(MailboxPolicy.inbox(of: did), convoId: nil)
            } catch let error as ZoneError where error.code == .zoneExists {
                // Made before: one inbox per identity and endpoint.
            }
        }
        try await delivery.registerStorage(provider)
        try StorageRegistration.save(provider, home: home.path)
        var account = self
        account.storage = provider
        return account
    }

    /// What `home` registered (`registerStorage`), or nil for the default: records go to the
    /// documents' own server.
    public static func registeredStorage(in home: ImprintHome) throws -> StorageProvider? {
        try StorageRegistration.load(home: home.path)
    }

    /// This identity's inbox when it lives on another server than the documents' (its
    /// registered endpoint), else nil.
    var foreignInboxEndpoint: String? {
        guard let endpoint = storage?.endpoint else { return nil }
        return StorageRegistration.canonical(endpoint) == StorageRegistration.canonical(serverURL) ? nil : endpoint
    }
}
