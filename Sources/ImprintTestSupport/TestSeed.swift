import Foundation

/// The seed for a randomised test: `IMPRINT_TEST_SEED` if set, else `fallback`. Printed with
/// `name` so a failure can be replayed.
///
/// The line goes to standard error, unbuffered, as Swift Testing's own lines do: on a pipe
/// (CI, `tee`) standard output is written in blocks of several kilobytes, so a seed printed
/// there showed up out of place among the tests' lines, cut mid-line, or not at all when the
/// run was stopped.
public func testSeed(_ name: String, fallback: UInt64) -> UInt64 {
    let seed = ProcessInfo.processInfo.environment["IMPRINT_TEST_SEED"].flatMap { UInt64($0) } ?? fallback
    FileHandle.standardError.write(Data("\(name): seed \(seed) (replay with IMPRINT_TEST_SEED=\(seed))\n".utf8))
    return seed
}
