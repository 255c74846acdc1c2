// swift-tools-version:6.0
// Imprint: collaborative documents with end-to-end encryption.
import PackageDescription

let package = Package(
    name: "Imprint",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "ImprintCRDT", targets: ["ImprintCRDT"]),
        .executable(name: "imprint", targets: ["imprint"]),
        .executable(name: "imprint-bench", targets: ["imprint-bench"]),
        // MARK: MLS (products)
        .executable(name: "mls-vectors", targets: ["mls-vectors"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ],
    targets: [
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
                "CZstd",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Collections", package: "swift-collections"),
            ]
        ),
        .testTarget(name: "ImprintCRDTTests", dependencies: ["ImprintCRDT", "EditingTraces"]),

        // MARK: Test and benchmark support
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "EditingTraces", dependencies: ["CZlib", "ImprintCRDT"]),

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
                "CArchive",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Child process driven by ImprintBundleTests (crash and lock tests).
        .executableTarget(
            name: "imprint-bundle-testhelper",
            dependencies: [
                "ImprintBundle",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "ImprintBundleTests",
            dependencies: [
                "ImprintBundle",
                "CArchive",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // MARK: End Bundle

        // MARK: MLS
        .target(
            name: "ImprintMLS",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "ImprintMLSTests", dependencies: ["ImprintMLS"]),
        .executableTarget(name: "mls-vectors", dependencies: ["ImprintMLS"]),
        // Interop with AWS mls-rs through Tests/Interop/mls_rs_peer.py (and the `imprint mls` CLI).
        .testTarget(name: "ImprintMLSInteropTests", dependencies: ["ImprintMLS"]),

        // MARK: Executables
        .executableTarget(
            name: "imprint",
            dependencies: [
                "ImprintCRDT",
                "ImprintMLS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "imprint-bench",
            dependencies: [
                "ImprintCRDT",
                "ImprintMLS",
                "EditingTraces",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // Release benchmarks link the Swift runtime statically, as a shipped binary would:
            // shared-library pages otherwise add ~6 MB to the measured peak RSS.
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))]
        ),
    ]
)
