import Foundation

/// The seed for a randomised test: `IMPRINT_TEST_SEED` if set, else `fallback`. Printed with
/// `name` so a failure can be replayed.
public func testSeed(_ name: String, fallback: UInt64) -> UInt64 {
    let seed = ProcessInfo.processInfo.environment["IMPRINT_TEST_SEED"].flatMap { UInt64($0) } ?? fallback
    print("\(name): seed \(seed) (replay with IMPRINT_TEST_SEED=\(seed))")
    return seed
}
