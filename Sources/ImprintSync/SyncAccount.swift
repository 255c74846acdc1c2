import AsyncHTTPClient
import Foundation
import ImprintDelivery
import ImprintKeys
import ImprintZones
import NIOCore

/// Tunables of the sync layer.
public struct SyncOptions: Sendable, Hashable {
    /// How long a seq whose record has not reached the zone may hold back its epoch's
    /// commit before the client moves on and reports the gap (5 minutes by default).
    public var gapTimeout: Duration = .seconds(300)
    /// Key packages are topped up on the Delivery Service when fewer than this many unused
    /// ones remain in the key store.
    public var keyPackageLowWater = 5
    /// How many key packages a top-up publishes.
    public var keyPackageBatch = 10
    /// Largest payload (sum of a message's chunks) a member accepts.
    public var maximumPayloadBytes = 256 << 20
    /// How often a commit that lost the race for an epoch is rebuilt and retried.
    public var commitRetries = 8
    /// Most application keys taken out of the sending ratchet ahead of use
    /// (`MLSGroup.reserveApplicationKeys`): one key-store commit then covers that many
    /// messages instead of one. A shared document starts with one and doubles the reservation
    /// each time it runs out, so a one-shot `imprint push` wastes none and a typing session
    /// soon commits its ratchet once per this many messages. A process that ends with keys
    /// left skips their generations; receivers step over them. 1 turns it off.
    public var sendingKeysAhead = 32
    /// Largest change-set ciphertext also relayed as a preview (`sendEphemeral` of kind
    /// `preview`), which members watching the document (`live`) show before the durable
    /// copy arrives (docs/sync.md, "Previews"). The Delivery Service's own limit is 2 KiB by
    /// default; a typed word takes 256 (the smallest bucket). 0 turns previews off.
    public var previewMaximumBytes = 2048
    /// How long a push leaves out the changes this member holds only from another member's
    /// preview: their author is delivering them. After it they are sent like any other
    /// change, so an edit whose author crashed after previewing it, before writing it, still
    /// reaches everyone, its author included (docs/sync.md, "Previews").
    public var previewGrace: Duration = .seconds(30)
    /// Whether `live` opens the member's ephemeral socket (Delivery Service v1.5, one
    /// WebSocket per live document) for previews and presence, both ways. Off, or on a service
    /// without it, they go by `sendEphemeral` and come by `subscribeEphemeral` (an
    /// authenticated request per message): the same guarantees, more latency.
    public var ephemeralSocket = true
    /// Members away longer than this are renewed by this member's client without being asked,
    /// when it is an admin of the document (`SharedDocument.renewMembers(awayFor:)`: removed
    /// and added again with a fresh Welcome, so compaction is not held back for ever and they
    /// are never locked out). Checked at the end of a pull, at most every quarter of the
    /// window and at least hourly. nil (the default): only when asked (`imprint compact
    /// --renew-away-days N`).
    public var renewMembersAwayFor: Duration?
    /// How long a push waits for its inbox copies to reach their servers (mailbox delivery,
    /// 2 seconds by default). Copies still on their way then arrive in the background and
    /// are recorded when they do, so one recipient's slow server does not hold up the push,
    /// nor the next one (`SharedDocument.finishInboxCopies()` waits for them).
    public var inboxCopyWait: Duration = .seconds(2)
    /// How long one request to the account's own server may take, Delivery Service and zone
    /// service alike, when the account is made by `SyncAccount.connect`. nil (the default)
    /// keeps each client's own: 30 seconds for the Delivery Service, 60 for zones. Raise it
    /// for a server reached over a slow link, or one the client shares a busy machine with.
    public var requestTimeout: Duration?
    public init() {}
}

/// One identity on one server: the key store that holds its keys, the Delivery Service and
/// zone clients that speak for it, and the home directory its sync state lives in. Cheap to
/// copy; every ``SharedDocument`` of the identity uses one.
///
/// ```swift
/// let home = ImprintHome.current()
/// let account = try await SyncAccount.connect(home: home, keyStore: try home.openKeyStore(passphrase: nil),
///                                             serverURL: "http://127.0.0.1:8080")
/// try await account.topUpKeyPackages()
/// ```
public struct SyncAccount: Sendable {
    public let home: ImprintHome
    public let keyStore: any KeyStore
    public let identity: DeviceIdentity
    /// The Delivery Service (`DeliveryClient` over HTTP).
    public private(set) var delivery: any DeliveryService
    /// Where shared zones live (the zone service of the same server by default).
    public private(set) var zones: any ZoneStore
    public var options: SyncOptions
    /// Where this identity wants its records delivered (`registerStorage`); nil: the
    /// documents' own server.
    public internal(set) var storage: StorageProvider?
    /// Zone servers of members who keep their inboxes elsewhere (and this identity's own).
    public let endpoints: ZoneEndpoints

    /// The identity's DID.
    public var did: String { identity.did.did }
    /// The server's base URL.
    public var serverURL: String { delivery.baseURL }

    /// `storage` defaults to what the home registered (`storage.json`), `endpoints` to a
    /// fresh directory of zone servers speaking for `identity`.
    public init(home: ImprintHome, keyStore: any KeyStore, identity: DeviceIdentity, delivery: any DeliveryService,
                zones: any ZoneStore, options: SyncOptions = SyncOptions(), storage: StorageProvider? = nil,
                endpoints: ZoneEndpoints? = nil) throws {
        self.home = home
        self.keyStore = keyStore
        self.identity = identity
        self.delivery = delivery
        self.zones = zones
        self.options = options
        self.storage = try storage ?? StorageRegistration.load(home: home.path)
        self.endpoints = endpoints ?? ZoneEndpoints(signer: ServiceAuthSigner(privateKey: identity.signingKey))
    }

    /// The account of `keyStore`'s device identity on the server at `serverURL`, whose service
    /// DID is read from its `_health`; zones are that server's zone service.
    public static func connect(home: ImprintHome, keyStore: any KeyStore, serverURL: String, httpClient: HTTPClient = .imprint,
                               options: SyncOptions = SyncOptions()) async throws -> SyncAccount {
        let identity = try keyStore.deviceIdentity()
        let signer = ServiceAuthSigner(privateKey: identity.signingKey)
        let probe = DeliveryClient(baseURL: serverURL, serviceDID: "", signer: signer, httpClient: httpClient)
        let serviceDID = try await probe.health().did
        var delivery = DeliveryClient(baseURL: serverURL, serviceDID: serviceDID, signer: signer, httpClient: httpClient)
        var zones = HTTPZoneStore(baseURL: serverURL, serviceDID: serviceDID, signer: signer, httpClient: httpClient)
        if let timeout = options.requestTimeout {
            delivery.timeout = TimeAmount(timeout)
            zones.timeout = TimeAmount(timeout)
        }
        return try SyncAccount(home: home, keyStore: keyStore, identity: identity, delivery: delivery, zones: zones, options: options,
                               endpoints: ZoneEndpoints(signer: signer))
    }

    /// The same account with another zone store (tests put a reordering store here).
    public func with(zones: any ZoneStore) -> SyncAccount {
        var account = self
        account.zones = zones
        return account
    }

    /// The same account with another Delivery Service (tests put hostile stand-ins here).
    public func with(delivery: any DeliveryService) -> SyncAccount {
        var account = self
        account.delivery = delivery
        return account
    }

    /// The MLS signature private key: the identity's Ed25519 key (so the leaf's key is the did:key's).
    var signaturePrivateKey: [UInt8] { Array(identity.signingKey.rawRepresentation) }
}
