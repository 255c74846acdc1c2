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
        .testTarget(name: "ImprintCRDTTests", dependencies: ["ImprintCRDT"]),

        // MARK: MLS
        .target(
            name: "ImprintMLS",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "ImprintMLSTests", dependencies: ["ImprintMLS"]),
        .executableTarget(name: "mls-vectors", dependencies: ["ImprintMLS"]),

        // MARK: Executables
        .executableTarget(
            name: "imprint",
            dependencies: [
                "ImprintCRDT",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "imprint-bench",
            dependencies: [
                "ImprintCRDT",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ]
)
