import Crypto
import Foundation
import ImprintBundle
import ImprintTestSupport

func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

func record(_ text: String) -> LogRecord {
    let bytes = Array(text.utf8)
    return LogRecord(hash: try! RecordHash(bytes: sha256(bytes)), bytes: bytes)
}

/// Same generator as imprint-bundle-testhelper's `makeRecord`.
func helperRecord(tag: String, index: Int) -> LogRecord {
    var bytes = Array("\(tag):\(index):".utf8)
    var length = (index &* 7919) % 3000 + (index % 3 == 0 ? 16_000 : 0)
    if index % 37 == 5 { length += 100_000 }
    bytes += [UInt8](repeating: UInt8(truncatingIfNeeded: index &* 31 &+ 7), count: length)
    return LogRecord(hash: try! RecordHash(bytes: sha256(bytes)), bytes: bytes)
}

func readFile(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The helper executable built next to the test bundle.
func helperExecutable() throws -> String {
    guard let path = siblingExecutable("imprint-bundle-testhelper") else {
        throw BundleError(.notFound, "imprint-bundle-testhelper not built next to the tests; run `swift build --build-tests` first")
    }
    return path
}

/// Starts `helper args...` with stdout to a pipe.
func startHelper(_ arguments: [String]) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try helperExecutable())
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.standardError
    try process.run()
    return (process, out)
}

/// Complete lines (ending in "\n") of `data`; a partial last line is dropped.
func completeLines(_ data: Data) -> [String] {
    let text = String(decoding: data, as: UTF8.self)
    var lines = text.components(separatedBy: "\n")
    lines.removeLast() // after the last "\n": empty or a partial line
    return lines
}

enum ChangeHashCheck {
    /// Whether a helper-written record's bytes hash to its recorded hash.
    static func matches(_ record: LogRecord) -> Bool {
        record.hash.bytes == sha256(record.bytes)
    }
}
