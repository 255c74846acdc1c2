#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A fresh directory under the system temp dir, removed when the value is deinitialised.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init(_ label: String = "store") {
        var template = Array("\(NSTemporaryDirectory())/imprint-\(label)-XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = String(cString: result!).replacingOccurrences(of: "//", with: "/")
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A small seeded generator so every randomized test is reproducible from its printed seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The seed for a randomised test: `IMPRINT_TEST_SEED` if set, else `fallback`; printed so a
/// failure can be replayed.
func testSeed(_ name: String, fallback: UInt64) -> UInt64 {
    let seed = ProcessInfo.processInfo.environment["IMPRINT_TEST_SEED"].flatMap { UInt64($0) } ?? fallback
    print("\(name): seed \(seed) (replay with IMPRINT_TEST_SEED=\(seed))")
    return seed
}

/// The repository root (this file is Tests/ImprintStoreTests/TestSupport.swift).
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// Every regular file under `root`, as paths relative to it.
func regularFiles(under root: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
    var result: [String] = []
    while let relative = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
            result.append(relative)
        }
    }
    return result.sorted()
}

/// Copies a directory tree (used to open sample bundles without touching the repository).
func copyTree(_ source: String, to destination: String) throws {
    try FileManager.default.copyItem(atPath: source, toPath: destination)
}
