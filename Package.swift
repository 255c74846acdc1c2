// swift-tools-version:6.2
// Imprint: collaborative documents with end-to-end encryption.
import PackageDescription

/// Optimized in debug builds too: the Ed25519 verifier's field arithmetic and the did:key
/// codec are pure computation, ~20 times slower unoptimized, and debug builds (every test run,
/// an app's debug build) verify a signature per MLS message and per Delivery Service request.
/// Checked arithmetic and exclusivity checks stay on with `-O`. Tools version 6.2 is what lets a
/// package that depends on Imprint by version accept this flag.
let optimizedInDebugBuilds: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "Imprint",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "ImprintCRDT", targets: ["ImprintCRDT"]),
        // Bundles in shared folders: ImprintStore (engine-aware) over ImprintBundle (files).
        .library(name: "ImprintStore", targets: ["ImprintStore"]),
        .library(name: "ImprintBundle", targets: ["ImprintBundle"]),
        .library(name: "ImprintMLS", targets: ["ImprintMLS"]),
        .library(name: "ImprintKeys", targets: ["ImprintKeys"]),
        .library(name: "ImprintZones", targets: ["ImprintZones"]),
        // Ed25519 verification with per-key precomputation, and did:key identities.
        .library(name: "ImprintEd25519", targets: ["ImprintEd25519"]),
        // End-to-end encrypted co-editing (SharedDocument); brings the bundle, MLS, key-store,
        // zone and Delivery Service client modules with it.
        .library(name: "ImprintSync", targets: ["ImprintSync"]),
        // Reviewer snapshots: encrypted read-only HTML viewers and anchored comments coming back.
        .library(name: "ImprintSnapshot", targets: ["ImprintSnapshot"]),
        .executable(name: "imprint", targets: ["imprint"]),
        .executable(name: "imprint-bench", targets: ["imprint-bench"]),
        // MARK: MLS (products)
        .executable(name: "mls-vectors", targets: ["mls-vectors"]),
        // MARK: Delivery
        .library(name: "ImprintDelivery", targets: ["ImprintDelivery"]),
        .library(name: "ImprintServer", targets: ["ImprintServer"]),
        .executable(name: "imprint-server", targets: ["imprint-server"]),
        .executable(name: "imprint-delivery-bench", targets: ["imprint-delivery-bench"]),
        // MARK: end Delivery
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        // `swift package generate-documentation` (the DocC catalogs under Sources/*/*.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // MARK: Delivery
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // TLS for the ephemeral socket's client (already in the graph through async-http-client).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The ephemeral socket (DS v1.5): WebSocket frames and session (WSCore, server side,
        // under Hummingbird's HTTP/1 channel); the tests' raw client (WSClient). hummingbird-websocket's
        // own upgrade channel answers a refused upgrade with a bare 400, not the contract's error.
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        // MARK: end Delivery
    ],
    targets: [
        // MARK: Leaves
        // The one JSON value type, hex codec and LEB128 every module shares. Foundation-free,
        // no dependencies; not a product (re-exported where its types appear in public API).
        .target(name: "ImprintEncoding", swiftSettings: optimizedInDebugBuilds),
        .testTarget(name: "ImprintEncodingTests", dependencies: ["ImprintEncoding", "ImprintTestSupport"]),
        // POSIX file primitives: atomic files, file locks, directory watching. Used by bundles,
        // the key store and zone folders without importing bundles or libarchive. Not a product.
        .target(name: "ImprintFiles"),
        .testTarget(name: "ImprintFilesTests", dependencies: ["ImprintFiles", "ImprintTestSupport"]),

        // MARK: System libraries
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),

        // MARK: Document engine
        .target(
            name: "ImprintCRDT",
            dependencies: [
                "ImprintEncoding",
                "CZstd",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Collections", package: "swift-collections"),
            ]
        ),
        .testTarget(name: "ImprintCRDTTests", dependencies: ["ImprintCRDT", "ImprintEncoding", "EditingTraces", "ImprintTestSupport"]),

        // MARK: Test and benchmark support
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "EditingTraces", dependencies: ["CZlib", "ImprintCRDT", "ImprintEncoding"]),
        // Helpers shared by the test targets: SplitMix64, TemporaryDirectory, testSeed.
        // Foundation only, no Imprint module; not a product.
        .target(name: "ImprintTestSupport"),

        // MARK: Bundle
        // `.imprint` bundles on disk: atomic files, per-device change logs, locks,
        // metadata, assets, conflict copies, archives. Opaque bytes only: no CRDT dependency.
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"])]
        ),
        .target(
            name: "ImprintBundle",
            dependencies: [
                "ImprintEncoding",
                "ImprintFiles",
                "CArchive",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Child process driven by ImprintBundleTests (crash and lock tests).
        .executableTarget(
            name: "imprint-bundle-testhelper",
            dependencies: [
                "ImprintBundle",
                "ImprintFiles",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "ImprintBundleTests",
            dependencies: [
                "ImprintBundle",
                "ImprintEncoding",
                "ImprintFiles",
                "CArchive",
                "ImprintTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // MARK: End Bundle

        // MARK: Store
        // Engine <-> bundle glue: a Document built from a bundle's snapshots, logs and
        // conflict copies; local changes appended durably. docs/document-schema.md.
        .target(name: "ImprintStore", dependencies: ["ImprintCRDT", "ImprintBundle"]),
        .testTarget(name: "ImprintStoreTests", dependencies: ["ImprintStore", "ImprintBundle", "ImprintCRDT", "ImprintTestSupport"]),
        // MARK: End Store

        // MARK: Signatures
        // Ed25519 verification with per-key precomputation, shared by MLS and the Delivery
        // Service. A leaf: swift-crypto only.
        // Also did:key (`DIDKey`), the Ed25519 public key as an identity string.
        .target(name: "ImprintEd25519", dependencies: ["ImprintEncoding", .product(name: "Crypto", package: "swift-crypto")],
                swiftSettings: optimizedInDebugBuilds),
        .testTarget(name: "ImprintEd25519Tests", dependencies: ["ImprintEd25519", "ImprintTestSupport", .product(name: "Crypto", package: "swift-crypto")]),

        // MARK: Reviewer snapshots
        // Encrypted read-only viewers in one HTML file, and reviewers' comments brought home
        // as anchored comments (docs/reviewer-snapshots.md).
        // The viewer page and the snapshot envelope, with no engine: what `imprint-server`
        // serves at /review for reviewer links. Not a product (re-exported by ImprintSnapshot).
        .target(name: "ImprintReviewViewer", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .target(
            name: "ImprintSnapshot",
            dependencies: [
                "ImprintReviewViewer",
                "ImprintEncoding", "ImprintCRDT", "ImprintStore", "ImprintBundle", "ImprintFiles", "ImprintDelivery", "ImprintZones", "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "ImprintSnapshotTests",
            dependencies: [
                "ImprintSnapshot", "ImprintStore", "ImprintCRDT", "ImprintBundle", "ImprintTestSupport", "ImprintKeys",
                "ImprintDelivery", "ImprintServerTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // MARK: MLS
        .target(
            name: "ImprintMLS",
            dependencies: ["ImprintEncoding", "ImprintEd25519", "ImprintMLSWire", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "ImprintMLSTests", dependencies: ["ImprintMLS", "ImprintMLSWire", "ImprintEncoding", "ImprintTestSupport", .product(name: "Crypto", package: "swift-crypto")]),
        // The public structure of MLS messages the Delivery Service may check without any MLS
        // state (a published KeyPackage). A leaf with no dependencies, shared by the server
        // (publish check) and ImprintMLS (`KeyPackage(published:cipherSuite:)`); the tests hold
        // it to ImprintMLS's own parser.
        .target(name: "ImprintMLSWire"),
        .executableTarget(name: "mls-vectors", dependencies: ["ImprintMLS"]),
        // Interop with AWS mls-rs through Tests/Interop/mls_rs_peer.py (and the `imprint mls` CLI).
        .testTarget(name: "ImprintMLSInteropTests", dependencies: ["ImprintMLS", "ImprintEncoding", "ImprintKeys"]),

        // MARK: Keys
        // Device identity, key store at rest (SQLite, sealed secrets), forward-secure deletes.
        .target(
            name: "ImprintKeys",
            dependencies: [
                "ImprintEncoding",
                "ImprintFiles",
                "ImprintEd25519",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Child process driven by ImprintKeysTests (crash test, fixture generator).
        .executableTarget(
            name: "imprint-keys-testhelper",
            dependencies: ["ImprintKeys", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "ImprintKeysTests",
            dependencies: [
                "ImprintKeys",
                "ImprintEd25519",
                "ImprintTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures"]
        ),
        // MARK: End Keys

        // MARK: Delivery
        .target(
            name: "ImprintDelivery",
            dependencies: [
                "ImprintEncoding",
                "ImprintEd25519",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "ImprintServer",
            dependencies: [
                "ImprintEncoding",
                "ImprintDelivery",
                "ImprintEd25519",
                "ImprintMLSWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ],
            resources: [.copy("Resources/openapi.json")]
        ),
        // The zone service (docs/zone-service.md): ciphertext records and assets, served by
        // imprint-server beside the Delivery Service. Never the engine, MLS or key material.
        .target(
            name: "ImprintZoneService",
            dependencies: [
                "ImprintServer",
                "ImprintDelivery",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "imprint-server",
            dependencies: [
                "ImprintServer",
                "ImprintZoneService",
                "ImprintReviewViewer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "imprint-delivery-bench",
            dependencies: [
                "ImprintEncoding",
                "ImprintServer",
                "ImprintDelivery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(name: "ImprintDeliveryTests", dependencies: ["ImprintDelivery", "ImprintTestSupport", .product(name: "NIOCore", package: "swift-nio")]),
        // What the server test targets share: StoreKind (every test on SQLite and PostgreSQL),
        // a running server on loopback, raw HTTP, convo fixtures. Not a product.
        .target(
            name: "ImprintServerTestSupport",
            dependencies: [
                "ImprintEncoding",
                "ImprintServer",
                "ImprintDelivery",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ImprintZoneServiceTests",
            dependencies: [
                "ImprintZoneService",
                "ImprintZones",
                "ImprintServer",
                "ImprintDelivery",
                "ImprintServerTestSupport",
                "ImprintTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ImprintServerTests",
            dependencies: [
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                "ImprintServer",
                "ImprintServerTestSupport",
                "ImprintDelivery",
                "ImprintZones",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        // MARK: end Delivery

        // MARK: Zones
        // Record zones (metadata + content-addressed ciphertext assets) behind one ZoneStore
        // seam: in memory, a shared folder, the zone service over HTTP; payload chunking.
        // Never the engine, MLS or bundles. docs/zones.md.
        .target(
            name: "ImprintZones",
            dependencies: [
                "ImprintDelivery",
                "ImprintEncoding",
                "ImprintFiles",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        // Child process for the zone tests' memory measurement (streamed chunking).
        .executableTarget(
            name: "imprint-zones-testhelper",
            dependencies: ["ImprintZones", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "ImprintZonesTests",
            dependencies: [
                "ImprintZones",
                "ImprintDelivery",
                "ImprintTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // MARK: End Zones

        // MARK: Sync
        // End-to-end encrypted co-editing: the only module that knows the engine, bundles, MLS,
        // keys, zones and the Delivery Service together. docs/sync.md.
        .target(
            name: "ImprintSync",
            dependencies: [
                "ImprintCRDT",
                "ImprintBundle",
                "ImprintStore",
                "ImprintMLS",
                "ImprintKeys",
                "ImprintZones",
                "ImprintDelivery",
                "ImprintEncoding",
                "ImprintFiles",
                "ImprintEd25519",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ImprintSyncTests",
            dependencies: [
                "ImprintSync",
                "ImprintCRDT",
                "ImprintStore",
                "ImprintBundle",
                "ImprintKeys",
                "ImprintMLS",
                "ImprintZones",
                "ImprintZoneService",
                "ImprintServer",
                "ImprintDelivery",
                "ImprintServerTestSupport",
                "ImprintTestSupport",
                "ImprintEncoding",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // MARK: End Sync

        // MARK: Samples
        .executableTarget(name: "sample-coediting", dependencies: ["ImprintCRDT"], path: "Samples/CoEditing"),
        .executableTarget(name: "sample-folder-sync", dependencies: ["ImprintStore", "ImprintBundle"], path: "Samples/FolderSync"),
        .executableTarget(name: "sample-shared-document", dependencies: ["ImprintSync", "ImprintStore", "ImprintKeys", "ImprintBundle"], path: "Samples/SharedDocument"),
        .executableTarget(
            name: "sample-reviewer-export",
            dependencies: ["ImprintSnapshot", "ImprintStore", "ImprintBundle", .product(name: "Crypto", package: "swift-crypto")],
            path: "Samples/ReviewerExport"),

        // MARK: Executables
        .executableTarget(
            name: "imprint",
            dependencies: [
                "ImprintEncoding",
                "ImprintFiles",
                "ImprintEd25519",
                "ImprintKeys",
                "ImprintCRDT",
                "ImprintBundle",
                "ImprintStore",
                "ImprintMLS",
                "ImprintSync",
                "ImprintSnapshot",
                "ImprintServer",
                "ImprintZoneService",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "imprint-bench",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                "ImprintSync",
                "ImprintServer",
                "ImprintZones",
                "ImprintSnapshot",
                "ImprintTestSupport",
                "ImprintKeys",
                "ImprintEncoding",
                "ImprintCRDT",
                "ImprintBundle",
                "ImprintStore",
                "ImprintMLS",
                "ImprintEd25519",
                "EditingTraces",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ]
)
