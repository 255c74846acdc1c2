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
                "EditingTraces",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ]
)
